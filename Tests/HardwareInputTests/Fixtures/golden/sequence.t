# A two-chord sequence: the prefix waits (the HUD shows its continuations at once with
# sequence_delay_ms = 0), the second chord hides it and fires the longer command.
% [hud]
% sequence_delay_ms = 0
% [[command]]
% id = "save-as"
% keys = "Ctrl+X Ctrl+S"
% [[command]]
% id = "save"
% keys = "Ctrl+S"

+leftctrl 0
+x 10
-x 20
+s 200
-s 210
-leftctrl 300

=> chord Ctrl+X 10
=> hud show sequence Ctrl+X 10
=> chord Ctrl+S 200
=> hud hide sequence 200
=> command save-as 200
