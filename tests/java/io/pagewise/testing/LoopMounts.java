package io.pagewise.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Freshly made file systems of each type the residency promise is tested on (ext4, XFS, btrfs), each on a sparse
 * image file attached to a loop device. Register it on a static field with {@code @RegisterExtension}: a file system
 * is made at its first {@link #directory} call in the class and unmounted, detached and deleted after the class.
 * Without root, the mkfs tools, or a kernel that mounts the type, the calling test skips with a message (fails under
 * CI=true).
 *
 * <p>{@link #blockDevice} attaches a loop device without a file system, for tests of block devices themselves.
 *
 * <p>The loop device of a file system reads and writes its image with O_DIRECT ({@code losetup --direct-io=on}) where the image's file
 * system takes it, so the image's own pages stay out of the page cache of the machine the tests run on.
 */
public final class LoopMounts implements AfterAllCallback {
    /** The file system types of the residency promise. */
    public static final List<String> TYPES = List.of("ext4", "xfs", "btrfs");
    /** The image size; XFS refuses file systems below 300 MiB. */
    private static final String IMAGE_SIZE = "512M";

    /** The size of each {@link #blockDevice}. */
    public static final long DEVICE_SIZE = 64L << 20;

    private final Map<String, Mount> mounts = new LinkedHashMap<>();
    /** Loop devices without a file system, from {@link #blockDevice}. */
    private final List<Mount> devices = new ArrayList<>();
    private final Map<String, String> unavailable = new LinkedHashMap<>();

    private record Mount(Path root, String device, Path directory) {}

    /** An empty directory on a fresh file system of this type (one of {@link #TYPES}), or a skip (a failure on CI). */
    public synchronized Path directory(String type) throws IOException {
        if (!TYPES.contains(type)) throw new IllegalArgumentException("no loop mount of type " + type);
        Mount mount = mounts.get(type);
        if (mount == null && !unavailable.containsKey(type)) {
            String why = precondition(type);
            if (why != null) unavailable.put(type, why);
            else mount = make(type);
            if (mount != null) mounts.put(type, mount);
        }
        if (mount == null) {
            ExternalTools.unavailable(unavailable.get(type),
                    "CI runs as root with loop devices, xfsprogs and btrfs-progs, and must test " + TYPES);
        }
        return Files.createTempDirectory(mount.directory(), "test-");
    }

    /**
     * A loop device with this logical sector size on a sparse image of {@link #DEVICE_SIZE} bytes, detached after the
     * class; or a skip (a failure on CI) without root or losetup.
     */
    public synchronized Path blockDevice(int sectorSize) throws IOException {
        String why = precondition(List.of("losetup"));
        if (why != null) ExternalTools.unavailable(why, "CI runs as root with loop devices, and must test block devices");
        Path root = Files.createTempDirectory("pagewise-blockdev-");
        Path image = root.resolve("device.img");
        boolean attached = false;
        try {
            ExternalTools.run(30, "truncate", "-s", String.valueOf(DEVICE_SIZE), image.toString()).assertOk("truncate");
            ExternalTools.Result attach = ExternalTools.run(30, tool("losetup"), "--sector-size",
                    String.valueOf(sectorSize), "--find", "--show", image.toString());
            attach.assertOk("losetup --sector-size " + sectorSize);
            String device = attach.stdout().trim();
            devices.add(new Mount(root, device, root));
            attached = true;
            return Path.of(device);
        } finally {
            if (!attached) remove(new Mount(root, null, root), false);
        }
    }

    /** What stops this test from making a file system of this type, or null. */
    private static String precondition(String type) throws IOException {
        return precondition(List.of("losetup", "mount", "umount", "mkfs." + type));
    }

    /** What stops this test from using loop devices with these tools, or null. */
    private static String precondition(List<String> tools) throws IOException {
        ExternalTools.Result id = ExternalTools.run(10, "id", "-u");
        String uid = id.stdout().trim();
        if (id.status() != 0 || !uid.equals("0")) return "loop devices need root (id -u: " + uid + ")";
        for (String tool : tools) {
            if (which(tool) == null) return "external program missing: " + tool + " (not on PATH, in /usr/sbin or /sbin)";
        }
        return null;
    }

    /** The program on PATH or in the sbin directories a non-login root shell may lack, or null. */
    static Path which(String program) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(":")));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
        for (String dir : dirs) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, program);
            if (Files.isExecutable(candidate)) return candidate;
        }
        return null;
    }

    private static String tool(String program) {
        Path path = which(program);
        return path == null ? program : path.toString();
    }

    /** Makes and mounts a file system, or records in {@link #unavailable} why it cannot and returns null. */
    private Mount make(String type) throws IOException {
        Path root = Files.createTempDirectory("pagewise-" + type + "-");
        Path image = root.resolve(type + ".img");
        Path directory = root.resolve("mnt");
        Files.createDirectory(directory);
        String device = null;
        boolean mounted = false;
        try {
            ExternalTools.run(30, "truncate", "-s", IMAGE_SIZE, image.toString()).assertOk("truncate");
            ExternalTools.Result attach = ExternalTools.run(30, tool("losetup"), "--direct-io=on", "--find", "--show",
                    image.toString());
            if (attach.status() != 0) { // the image's file system may refuse O_DIRECT: then cached, but still a loop
                attach = ExternalTools.run(30, tool("losetup"), "--find", "--show", image.toString());
            }
            if (attach.status() != 0) {
                unavailable.put(type, "losetup could not attach " + image + ": " + attach.stderr().trim());
                return null;
            }
            device = attach.stdout().trim();
            List<String> mkfs = new ArrayList<>(List.of(tool("mkfs." + type)));
            mkfs.add(switch (type) {
                case "ext4" -> "-qF";
                case "xfs", "btrfs" -> "-qf";
                default -> throw new IllegalArgumentException(type);
            });
            mkfs.add(device);
            ExternalTools.run(120, mkfs.toArray(String[]::new)).assertOk(String.join(" ", mkfs));
            ExternalTools.Result mount = ExternalTools.run(60, tool("mount"), "-t", type, device, directory.toString());
            if (mount.status() != 0) {
                unavailable.put(type, "mount -t " + type + " " + device + " failed: " + mount.stderr().trim());
                return null;
            }
            mounted = true;
            return new Mount(root, device, directory);
        } finally {
            if (!mounted) remove(new Mount(root, device, directory), false);
        }
    }

    @Override
    public synchronized void afterAll(ExtensionContext context) throws IOException {
        List<String> problems = new ArrayList<>();
        for (Mount mount : mounts.values()) {
            try {
                remove(mount, true);
            } catch (IOException | AssertionError e) {
                problems.add(e.getMessage());
            }
        }
        for (Mount device : devices) {
            try {
                remove(device, false);
            } catch (IOException | AssertionError e) {
                problems.add(e.getMessage());
            }
        }
        devices.clear();
        mounts.clear();
        unavailable.clear();
        if (!problems.isEmpty()) fail("cleaning up loop mounts: " + problems);
    }

    /** Unmounts (when mounted), detaches the loop device (when attached) and deletes the image and directories. */
    private static void remove(Mount mount, boolean mounted) throws IOException {
        String problem = null;
        if (mounted) {
            ExternalTools.Result umount = null;
            for (int attempt = 0; attempt < 20; attempt++) {
                umount = ExternalTools.run(60, tool("umount"), mount.directory().toString());
                if (umount.status() == 0) break;
                sleep(100); // a process that had a file open there may still be exiting
            }
            if (umount.status() != 0) {
                problem = "umount " + mount.directory() + ": " + umount.stderr().trim();
                ExternalTools.run(60, tool("umount"), "--lazy", mount.directory().toString());
            }
        }
        if (mount.device() != null) {
            ExternalTools.Result detach = ExternalTools.run(30, tool("losetup"), "--detach", mount.device());
            if (detach.status() != 0 && problem == null) {
                problem = "losetup --detach " + mount.device() + ": " + detach.stderr().trim();
            }
        }
        try (Stream<Path> paths = Files.walk(mount.root())) {
            for (Path path : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(path);
            }
        }
        if (problem != null) fail(problem);
    }

    private static void sleep(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
