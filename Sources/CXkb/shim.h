#ifndef KBD_COMMANDD_CXKB_SHIM_H
#define KBD_COMMANDD_CXKB_SHIM_H
#include <xkbcommon/xkbcommon.h>
#include <xkbcommon/xkbcommon-compose.h>
#include <xkbcommon/xkbcommon-keysyms.h>
#endif
