# A chord pressed and released fires its command once, on the press of its last key.
% [[command]]
% id = "save"
% keys = "Ctrl+S"

+leftctrl 0
+s 50
-s 100
-leftctrl 150

=> chord Ctrl+S 50
=> command save 50
