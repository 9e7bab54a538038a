/* Option (a) of the bar's toolkit measurement (issue 28): GTK 3 + gtk-layer-shell.
 * A bottom-anchored layer surface, 40 px high, exclusive zone 40, keyboard interactivity
 * none, six labelled buttons. Prints the wall-clock time (CLOCK_REALTIME, seconds) when its
 * first frame was committed ("first-frame T"), then idles until killed. Build and run:
 * tests-desktop/bar-toolkits/measure.sh. */
#include <gtk/gtk.h>
#include <gtk-layer-shell.h>
#include <stdio.h>
#include <time.h>

static void after_paint(GdkFrameClock *clock, gpointer data) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("first-frame %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    fflush(stdout);
    g_signal_handlers_disconnect_by_func(clock, after_paint, data);
}

static void realized(GtkWidget *w, gpointer data) {
    (void)data;
    g_signal_connect(gtk_widget_get_frame_clock(w), "after-paint", G_CALLBACK(after_paint), NULL);
}

int main(int argc, char **argv) {
    gtk_init(&argc, &argv);
    if (!gtk_layer_is_supported()) { fprintf(stderr, "no layer-shell\n"); return 2; }
    GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    gtk_layer_init_for_window(GTK_WINDOW(win));
    gtk_layer_set_layer(GTK_WINDOW(win), GTK_LAYER_SHELL_LAYER_BOTTOM);
    gtk_layer_set_anchor(GTK_WINDOW(win), GTK_LAYER_SHELL_EDGE_BOTTOM, TRUE);
    gtk_layer_set_anchor(GTK_WINDOW(win), GTK_LAYER_SHELL_EDGE_LEFT, TRUE);
    gtk_layer_set_anchor(GTK_WINDOW(win), GTK_LAYER_SHELL_EDGE_RIGHT, TRUE);
    gtk_layer_set_keyboard_mode(GTK_WINDOW(win), GTK_LAYER_SHELL_KEYBOARD_MODE_NONE);
    gtk_layer_set_exclusive_zone(GTK_WINDOW(win), 40);
    gtk_widget_set_size_request(win, -1, 40);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    const char *labels[] = {"Save", "Undo", "Redo", "Find", "Copy", "Paste"};
    for (int i = 0; i < 6; i++) gtk_box_pack_start(GTK_BOX(box), gtk_button_new_with_label(labels[i]), FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(win), box);
    g_signal_connect(win, "realize", G_CALLBACK(realized), NULL);
    gtk_widget_show_all(win);
    gtk_main();
    return 0;
}
