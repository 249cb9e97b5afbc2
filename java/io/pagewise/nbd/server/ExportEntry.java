package io.pagewise.nbd.server;

import io.pagewise.nbd.Export;

/** An export as the server lists it: its name, a line for humans, and what serves it. */
public record ExportEntry(String name, String description, Export export) {}
