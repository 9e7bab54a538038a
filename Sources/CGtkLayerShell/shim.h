// GTK 3 and gtk-layer-shell (pkg-config gtk-layer-shell-0, which requires gtk+-3.0): the
// shortcuts bar's toolkit. Only CBarShim (C) uses them; Swift sees the shim's own header.
#include <gtk/gtk.h>
#include <gtk-layer-shell.h>
