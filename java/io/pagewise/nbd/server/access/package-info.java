/**
 * Who may connect: {@link io.pagewise.nbd.server.access.ClientAccess} (allowed addresses, Unix peer users and TLS
 * client certificate subjects), {@link io.pagewise.nbd.server.access.AddressRange} (one CIDR block) and {@link
 * io.pagewise.nbd.server.access.AccessRefused} (the refusal a handshake ends with).
 */
package io.pagewise.nbd.server.access;
