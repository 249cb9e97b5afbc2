/**
 * Which export a client's name finds: {@link io.pagewise.nbd.server.exports.Exports} looks in the fixed exports and
 * the {@link io.pagewise.nbd.server.ExportSource}s, counts the clients of each entry and releases an entry once its
 * last client has gone.
 */
package io.pagewise.nbd.server.exports;
