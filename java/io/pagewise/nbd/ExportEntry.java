package io.pagewise.nbd;

/** An export as the server lists it: its name, a line for humans, and what serves it. */
record ExportEntry(String name, String description, Export export) {}
