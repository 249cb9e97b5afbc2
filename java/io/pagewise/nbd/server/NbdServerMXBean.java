package io.pagewise.nbd.server;

/**
 * A server's state through JMX, for applications that embed it and watch it with their JMX tooling (jconsole,
 * a JMX exporter): registered as {@code io.pagewise:type=NbdServer,name=NAME} when
 * {@link NbdServer.Builder#jmx(String)} asks for it, with one {@link ExportMXBean} per export served. The values are
 * those of {@link ServerStats} and of the Prometheus text ({@link NbdServer#metrics()}).
 */
public interface NbdServerMXBean {
    /** {@return the address the server listens on, as a URI of its first export} */
    String getUri();

    /** {@return connections accepted since the start} */
    long getConnectionsAccepted();

    /** {@return connections open now, in the handshake or in transmission} */
    int getConnectionsOpen();

    /** {@return connections in transmission now} */
    int getConnectionsTransmitting();

    /** {@return handshakes that ended with the client in transmission} */
    long getHandshakes();

    /** {@return clients kept out by the allow-lists} */
    long getAccessRefusals();

    /** {@return clients refused because the connection limit was reached} */
    long getRejectedConnections();

    /** {@return connections dropped for breaking the protocol} */
    long getProtocolErrors();

    /** {@return requests read and not yet answered now} */
    int getRequestsInFlight();

    /** {@return bytes of the in-flight budget requests hold now} */
    long getInflightBytes();

    /** {@return the names of the exports served so far} */
    String[] getExports();
}
