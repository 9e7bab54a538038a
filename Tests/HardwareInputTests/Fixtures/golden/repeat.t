# A held chord with repeat = true fires again on each autorepeat of its key; without, once.
% [[command]]
% id = "volume-up"
% keys = "Ctrl+Up"
% repeat = true
% [[command]]
% id = "save"
% keys = "Ctrl+S"

+leftctrl 0
+up 10
*up 510
*up 543
-up 560
+s 600
*s 1100
-s 1120
-leftctrl 1200

=> chord Ctrl+Up 10
=> command volume-up 10
=> command volume-up 510
=> command volume-up 543
=> chord Ctrl+S 600
=> command save 600
