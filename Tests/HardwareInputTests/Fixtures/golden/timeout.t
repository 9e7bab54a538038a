# A prefix left alone past sequence_timeout_ms ends (its HUD hides at 10 + 1000 ms); the next
# Ctrl+S is the short command.
% [settings]
% sequence_timeout_ms = 1000
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
-leftctrl 30
advance 1100
+leftctrl 1500
+s 1510
-s 1520
-leftctrl 1530

=> chord Ctrl+X 10
=> hud show sequence Ctrl+X 10
=> hud hide sequence 1010
=> chord Ctrl+S 1510
=> command save 1510
