#ifndef KBD_COMMANDD_CEVDEV_SHIM_H
#define KBD_COMMANDD_CEVDEV_SHIM_H
#include <libevdev/libevdev.h>
#include <linux/input.h>
#endif
