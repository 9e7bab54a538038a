/* Parses an evemu file with libevemu's own reader (what evemu-play and
 * evemu-device use) and prints the device name, the number of events and
 * whether EV_KEY/KEY_A is set. Exit 1 when libevemu rejects the file. */
#include <stdio.h>
#include <evemu.h>
#include <linux/input.h>

int main(int argc, char **argv) {
    if (argc != 2) return 64;
    FILE *fp = fopen(argv[1], "r");
    if (!fp) return 66;
    struct evemu_device *dev = evemu_new(NULL);
    if (evemu_read(dev, fp) <= 0) { fprintf(stderr, "evemu_read rejected the header\n"); return 1; }
    struct input_event ev;
    long n = 0;
    while (evemu_read_event(fp, &ev) > 0) n++;
    printf("%s|%ld|%d|%04x:%04x\n", evemu_get_name(dev), n, evemu_has_event(dev, EV_KEY, KEY_A),
           evemu_get_id_vendor(dev), evemu_get_id_product(dev));
    evemu_delete(dev);
    fclose(fp);
    return 0;
}
