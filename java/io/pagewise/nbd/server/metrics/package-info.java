/**
 * What the server shows of its counts, beyond {@link io.pagewise.nbd.server.ServerStats}: the counting interface
 * the protocol reports to ({@link io.pagewise.nbd.server.metrics.RequestStats}), the JMX beans ({@link
 * io.pagewise.nbd.server.metrics.ServerMBeans}) and the Prometheus text ({@link
 * io.pagewise.nbd.server.metrics.PrometheusText}).
 */
package io.pagewise.nbd.server.metrics;
