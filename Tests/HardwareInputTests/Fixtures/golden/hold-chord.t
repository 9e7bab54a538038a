# Super held, then a chord with it: the HUD never shows (Super was not held alone), the
# command fires; Super released at once after a tap shows nothing either.
% [hud]
% delay_ms = 400
% [[command]]
% id = "term"
% keys = "Super+T"

+leftmeta 0
+t 100
-t 150
advance 600
-leftmeta 700
+leftmeta 1000
-leftmeta 1100
advance 1500

=> chord Super+T 100
=> command term 100
