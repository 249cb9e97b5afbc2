package io.pagewise.nbd.server.access;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;

/** A CIDR block (10.0.0.0/8, fd00::/8) or one address; an IPv4 block also matches its IPv4-mapped IPv6 form. */
public final class AddressRange {
    private final byte[] network;
    private final int prefix;
    private final String text;

    private AddressRange(byte[] network, int prefix, String text) {
        this.network = network;
        this.prefix = prefix;
        this.text = text;
    }

    /**
     * Parses ADDRESS or ADDRESS/PREFIX, a literal address only (no host names: no DNS lookup decides who may
     * connect).
     *
     * @throws IllegalArgumentException naming the value when it is not one
     */
    public static AddressRange parse(String spec) {
        String value = spec.trim();
        int slash = value.indexOf('/');
        String address = slash < 0 ? value : value.substring(0, slash);
        if (address.startsWith("[") && address.endsWith("]")) address = address.substring(1, address.length() - 1);
        if (address.isEmpty() || !(address.indexOf(':') >= 0 || address.chars().allMatch(c -> c == '.' || Character.isDigit(c)))) {
            throw new IllegalArgumentException("allowed address '" + spec + "' is not an IP address or CIDR block");
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(address).getAddress(); // a literal: no lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("allowed address '" + spec + "' is not an IP address or CIDR block");
        }
        int prefix = bytes.length * 8;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(value.substring(slash + 1));
            } catch (NumberFormatException e) {
                prefix = -1;
            }
            if (prefix < 0 || prefix > bytes.length * 8) {
                throw new IllegalArgumentException("allowed address '" + spec + "': the prefix length must be 0 to "
                        + bytes.length * 8);
            }
        }
        return new AddressRange(bytes, prefix, value);
    }

    boolean contains(InetAddress address) {
        byte[] bytes = address.getAddress();
        if (address instanceof Inet6Address && network.length == 4 && isIpv4Mapped(bytes)) {
            bytes = java.util.Arrays.copyOfRange(bytes, 12, 16);
        } else if (address instanceof Inet4Address && network.length == 16) {
            return false;
        }
        if (bytes.length != network.length) return false;
        int whole = prefix / 8;
        for (int i = 0; i < whole; i++) {
            if (bytes[i] != network[i]) return false;
        }
        int rest = prefix % 8;
        if (rest == 0) return true;
        int mask = (0xff << (8 - rest)) & 0xff;
        return (bytes[whole] & mask) == (network[whole] & mask);
    }

    private static boolean isIpv4Mapped(byte[] bytes) {
        for (int i = 0; i < 10; i++) {
            if (bytes[i] != 0) return false;
        }
        return bytes[10] == (byte) 0xff && bytes[11] == (byte) 0xff;
    }

    @Override
    public String toString() {
        return text;
    }

    /** An address for messages: a socket path, or HOST:PORT with IPv6 hosts in brackets. */
    public static String describe(SocketAddress address) {
        if (address instanceof UnixDomainSocketAddress) return ((UnixDomainSocketAddress) address).getPath().toString();
        if (address instanceof InetSocketAddress) {
            InetSocketAddress inet = (InetSocketAddress) address;
            String host = inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString();
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + inet.getPort();
        }
        return String.valueOf(address);
    }
}
