package io.pagewise.nbd.server;

import io.pagewise.device.BlockDevice;

/** An export as the server lists it: its name, a line for humans, and the device that serves it. */
record ExportEntry(String name, String description, BlockDevice device) {}
