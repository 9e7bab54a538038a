# A command with action = "hud" toggles the HUD: shown by the first press, hidden by the second
# (its chord is said; no command event: nothing runs).
% [[command]]
% id = "help"
% keys = "Ctrl+Alt+H"
% action = "hud"

+leftctrl 0
+leftalt 10
+h 20
-h 30
+h 500
-h 510
-leftalt 600
-leftctrl 610

=> chord Ctrl+Alt+H 20
=> hud show chord 20
=> chord Ctrl+Alt+H 500
=> hud hide chord 500
