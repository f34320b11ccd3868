/* GLib for Swift (the GLib bridge's Swift target), found by pkg-config. */
#include <glib.h>
