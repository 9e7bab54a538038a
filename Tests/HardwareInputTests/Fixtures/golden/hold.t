# Super held alone past [hud] delay_ms shows the HUD; releasing it hides it.
% [hud]
% delay_ms = 400
% [[command]]
% id = "term"
% keys = "Super+T"

+leftmeta 0
advance 400
-leftmeta 900

=> hud show hold 400
=> hud hide hold 900
