package io.pagewise.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pagewise.testing.ExternalTools;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar and {@code bin/pagewise} as a user runs them, on the JVM running the tests (CI runs this on
 * JDK 17 and again on JDK 25): they start warning-free, and the launcher builds the jar when there is none.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LauncherIT {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    private static final String JAVA_HOME = System.getProperty("java.home");

    @TempDir
    Path dir;

    /** The links of {@link #pathWith}: JUnit warns about links out of a temp dir it deletes. */
    @AfterEach
    void removeLinks() throws IOException {
        Path path = dir.resolve("path");
        if (Files.isDirectory(path)) {
            try (var links = Files.list(path)) {
                for (Path link : links.toList()) Files.delete(link);
            }
        }
    }

    private static Path jar() {
        Path jar = Path.of(System.getProperty("pagewise.jar", ""));
        assertTrue(Files.isRegularFile(jar), "the packaged jar (system property pagewise.jar) is missing: " + jar);
        return jar;
    }

    private static void assertNoWarnings(ExternalTools.Result result, String what) {
        result.assertOk(what);
        assertFalse(result.stderr().contains("WARNING"), what + " printed JVM warnings:\n" + result.stderr());
    }

    @Test
    void theJarDeclaresNativeAccessAndRunsWithoutWarnings() throws IOException {
        try (JarFile jar = new JarFile(jar().toFile())) {
            assertEquals("ALL-UNNAMED", jar.getManifest().getMainAttributes().getValue("Enable-Native-Access"));
        }
        ExternalTools.Result version = ExternalTools.run(60, JAVA_HOME + "/bin/java", "-jar", jar().toString(), "--version");
        assertNoWarnings(version, "java -jar pagewise.jar --version");
        assertTrue(version.stdout().contains("native library: loaded"), version.stdout());
        assertNoWarnings(ExternalTools.run(60, JAVA_HOME + "/bin/java", "-jar", jar().toString(), "cachestats",
                jar().toString()), "java -jar pagewise.jar cachestats");
    }

    @Test
    void binPagewiseRunsWithoutWarnings() throws IOException {
        Path launcher = PROJECT.resolve("bin/pagewise");
        Map<String, String> env = Map.of("JAVA_HOME", JAVA_HOME, "PAGEWISE_JAR", jar().toString());
        assertNoWarnings(ExternalTools.run(env, 60, launcher.toString(), "--version"), "bin/pagewise --version");
        assertNoWarnings(ExternalTools.run(env, 60, launcher.toString(), "copy", "pattern:4M", "null:"),
                "bin/pagewise copy pattern:4M null:");
        // copy SRC - writes the bytes to the launcher's standard output, a pipe here.
        ExternalTools.Result streamed = ExternalTools.run(env, 60, "bash", "-c",
                "set -o pipefail; \"$0\" copy pattern:4M - | wc -c", launcher.toString());
        assertNoWarnings(streamed, "bin/pagewise copy pattern:4M - | wc -c");
        assertEquals("4194304", streamed.stdout().strip());
    }

    /**
     * Under the C locale (a systemd service starts without LANG) the JVM encodes file names as ASCII and cannot name
     * 'disk é.img': the launcher runs it under UTF-8, and {@code java -jar} says what to do instead of a stack trace.
     * The name is made by the shell, so that the test's own locale does not matter.
     */
    @Test
    void aNonAsciiFileNameWorksUnderTheCLocale() throws IOException {
        String script = "cd \"$0\" && name=\"disk $(printf '\\303\\251').img\" && printf data > \"$name\""
                + " && env -u LANG -u LC_CTYPE LC_ALL=C \"$1\" checksum \"$name\""
                + " && env -u LANG -u LC_CTYPE LC_ALL=C \"$2\" -jar \"$3\" checksum \"$name\"";
        ExternalTools.Result result = ExternalTools.run(Map.of("JAVA_HOME", JAVA_HOME, "PAGEWISE_JAR", jar().toString()),
                60, "bash", "-c", script, dir.toString(), PROJECT.resolve("bin/pagewise").toString(),
                JAVA_HOME + "/bin/java", jar().toString());
        assertTrue(result.stdout().contains("  disk \u00e9.img"), "bin/pagewise checksum under LC_ALL=C: " + result.stdout()
                + result.stderr());
        assertEquals(2, result.status(), "java -jar under LC_ALL=C: " + result.stderr());
        assertTrue(result.stderr().contains("cannot be encoded in this locale's character set (ANSI_X3.4-1968); run under"
                + " a UTF-8 locale (LC_ALL=C.UTF-8"), result.stderr());
        assertFalse(result.stderr().contains("Exception"), result.stderr());
    }

    /**
     * A fresh clone has no target/ at all: the launcher must notice there is no jar and build one. Here a stand-in
     * {@code mvn} on PATH "builds" by copying the real jar, so the test checks the launcher's logic in seconds.
     */
    @Test
    void binPagewiseBuildsTheJarWhenTargetHasNone() throws IOException {
        Path root = dir.resolve("clone");
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("java"));
        Files.copy(PROJECT.resolve("bin/pagewise"), root.resolve("bin/pagewise"));
        Files.writeString(root.resolve("pom.xml"), "<project/>\n");
        Path fakeBin = Files.createDirectories(dir.resolve("fake-bin"));
        Path mvn = fakeBin.resolve("mvn");
        Files.writeString(mvn, "#!/bin/sh\nmkdir -p '" + root + "/target' && cp '" + jar() + "' '" + root
                + "/target/pagewise-0.0.0.jar'\n");
        Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> env = Map.of("JAVA_HOME", JAVA_HOME, "PATH", fakeBin + ":" + System.getenv("PATH"));

        ExternalTools.Result first = ExternalTools.run(env, 60, root.resolve("bin/pagewise").toString(), "--version");
        first.assertOk("bin/pagewise --version on a checkout with no target/");
        assertTrue(first.stderr().contains("building the jar"), first.stderr());
        assertTrue(first.stdout().startsWith("pagewise "), first.stdout());
        assertTrue(Files.exists(root.resolve("target/pagewise-0.0.0.jar")));

        ExternalTools.Result second = ExternalTools.run(env, 60, root.resolve("bin/pagewise").toString(), "--version");
        second.assertOk("bin/pagewise --version once the jar is built");
        assertFalse(second.stderr().contains("building the jar"), "built again although the jar is fresh: " + second.stderr());
    }

    /**
     * A checkout as the launcher sees it: bin/pagewise, pom.xml, java/ with a source newer than target/'s jar (a copy
     * of the real one), so stale.
     */
    private Path staleCheckout(Path root) throws IOException {
        Files.createDirectories(root.resolve("bin"));
        Files.createDirectories(root.resolve("target"));
        Files.copy(PROJECT.resolve("bin/pagewise"), root.resolve("bin/pagewise"));
        Files.writeString(root.resolve("pom.xml"), "<project/>\n");
        Path jar = Files.copy(jar(), root.resolve("target/pagewise-0.0.0.jar"));
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().minusSeconds(3600)));
        Files.createDirectories(root.resolve("java"));
        Files.writeString(root.resolve("java/Edited.java"), "class Edited {}\n");
        return root;
    }

    /** A JDK 25 or later: the one running the tests, else system property pagewise.jdk25, else one in /usr/lib/jvm. */
    private static Path jdk25() throws IOException {
        if (Runtime.version().feature() >= 25) return Path.of(JAVA_HOME);
        String given = System.getProperty("pagewise.jdk25", "");
        if (!given.isEmpty()) return Path.of(given);
        Path jvms = Path.of("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (Stream<Path> homes = Files.list(jvms)) {
                for (Path home : homes.sorted().toList()) {
                    Path release = home.resolve("release");
                    if (Files.isRegularFile(home.resolve("bin/java")) && Files.isRegularFile(release)
                            && Files.readString(release).matches("(?s).*\nJAVA_VERSION=\"(2[5-9]|[3-9][0-9])[\".].*")) {
                        return home;
                    }
                }
            }
        }
        // Where there is none, the launcher never makes an AOT cache; CI has one (.ci/run needs it too).
        io.pagewise.testing.ExternalTools.unavailable("no JDK 25+ for bin/pagewise's AOT cache (set -Dpagewise.jdk25=HOME)",
                "the launcher's AOT cache must be tested on the JDK 25 it is made for");
        throw new AssertionError("unreachable");
    }

    private static List<Path> aotCaches(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(file -> file.getFileName().toString().endsWith(".aot")).sorted().toList();
        }
    }

    /** Fails when the JVM or the launcher printed a warning or an AOT log line ("[aot]", "[cds]"). */
    private static void assertNoJvmNoise(ExternalTools.Result result, String what) {
        result.assertOk(what);
        for (String line : result.stderr().lines().toList()) {
            String lower = line.toLowerCase(java.util.Locale.ROOT);
            assertFalse(lower.contains("warning") || lower.contains("[aot") || lower.contains("[cds") || lower.contains("error"),
                    what + " printed:\n" + result.stderr());
        }
    }

    /**
     * On JDK 25+ the first TLS serve trains the JVM's AOT cache beside the jar (one line says so), and the next runs
     * load their classes from it without a word; a changed jar gets a cache of its own, trained again, with no JVM
     * warning (the JVM itself runs a changed jar's old classes from a stale cache without noticing).
     */
    @Test
    @Timeout(value = 400, unit = TimeUnit.SECONDS)
    void onJdk25ATlsServeTrainsTheAotCacheOnceAndRunsFromItWarningFree() throws IOException {
        Path jdk = jdk25();
        Path jar = Files.copy(jar(), dir.resolve("pagewise.jar"));
        Map<String, String> env = Map.of("JAVA_HOME", jdk.toString(), "PAGEWISE_JAR", jar.toString(),
                "HOME", dir.resolve("home").toString());
        String launcher = PROJECT.resolve("bin/pagewise").toString();

        // Started by systemd's socket activation, a client is waiting already: no training then.
        Map<String, String> activated = new HashMap<>(env);
        activated.put("LISTEN_FDS", "1");
        activated.put("LISTEN_PID", "1");
        assertEquals("", ExternalTools.run(activated, 60, launcher, "serve", "--tls=require", "--help")
                .assertOk("bin/pagewise serve --tls=require --help, socket-activated").stderr());
        assertEquals(List.of(), aotCaches(dir), "trained while a client waits");

        ExternalTools.Result first = ExternalTools.run(env, 180, launcher, "serve", "--tls=require", "--help");
        assertNoJvmNoise(first, "the first bin/pagewise serve --tls=require --help on JDK 25");
        List<Path> caches = aotCaches(dir);
        assertEquals(1, caches.size(), "one AOT cache beside the jar: " + caches + "\n" + first.stderr());
        Path cache = caches.get(0);
        assertEquals("pagewise: training the JVM's AOT cache for TLS, once for this jar and JDK (about 15 s): " + cache
                + "\n", first.stderr());
        FileTime trained = Files.getLastModifiedTime(cache);

        Path classLog = dir.resolve("classes.log");
        Map<String, String> logging = new HashMap<>(env);
        logging.put("JDK_JAVA_OPTIONS", "-Xlog:class+load=info:file=" + classLog);
        ExternalTools.Result second = ExternalTools.run(logging, 60, launcher, "serve", "--tls=require", "--help");
        assertNoJvmNoise(second, "the second run");
        assertEquals(List.of(), second.stderr().lines().filter(line -> !line.startsWith("NOTE: Picked up JDK_JAVA_OPTIONS"))
                .toList(), "the second run trains nothing and says nothing");
        assertTrue(Files.readString(classLog).contains("io.pagewise.cli.Main source: shared objects file"),
                "the second run's classes come from the AOT cache");
        assertEquals(trained, Files.getLastModifiedTime(cache), "the cache was trained again");
        assertEquals(List.of(cache), aotCaches(dir));

        // Another build of the jar: the same classes and one more entry, as a rebuild with an edit would be.
        Path rebuilt = dir.resolve("rebuilt.jar");
        try (var in = new java.util.zip.ZipInputStream(Files.newInputStream(jar));
                var out = new java.util.zip.ZipOutputStream(Files.newOutputStream(rebuilt))) {
            for (var entry = in.getNextEntry(); entry != null; entry = in.getNextEntry()) {
                out.putNextEntry(new java.util.zip.ZipEntry(entry.getName()));
                in.transferTo(out);
            }
            out.putNextEntry(new java.util.zip.ZipEntry("io/pagewise/rebuilt.txt"));
            out.write("rebuilt\n".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        Files.move(rebuilt, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        ExternalTools.Result changed = ExternalTools.run(env, 180, launcher, "serve", "--tls=require", "--help");
        assertNoJvmNoise(changed, "the first run of a changed jar");
        List<Path> after = aotCaches(dir);
        assertEquals(1, after.size(), "the old jar's cache is replaced by the new one's: " + after);
        assertFalse(after.contains(cache), "the changed jar runs from the old jar's cache: " + after);
        assertEquals("pagewise: training the JVM's AOT cache for TLS, once for this jar and JDK (about 15 s): "
                + after.get(0) + "\n", changed.stderr());
        assertEquals("", ExternalTools.run(env, 60, launcher, "serve", "--tls=require", "--help")
                .assertOk("the second run of the changed jar").stderr());
    }

    /**
     * A training that fails (here: no temporary directory) is said in one line, the serve runs without the cache, and
     * later serves of the same jar do not spend the time again until PAGEWISE_AOT=train.
     */
    @Test
    void aFailedTrainingIsSaidOnceAndNotRepeated() throws IOException {
        Path jar = Files.copy(jar(), dir.resolve("pagewise.jar"));
        Map<String, String> env = new HashMap<>(Map.of("JAVA_HOME", jdk25().toString(), "PAGEWISE_JAR", jar.toString(),
                "HOME", dir.resolve("home").toString(), "JDK_JAVA_OPTIONS", "-Djava.io.tmpdir=" + dir.resolve("missing")));
        String launcher = PROJECT.resolve("bin/pagewise").toString();
        ExternalTools.Result first = ExternalTools.run(env, 120, launcher, "serve", "--tls=require", "--help");
        first.assertOk("bin/pagewise serve --tls=require --help with a training that fails");
        List<String> said = first.stderr().lines().filter(line -> line.startsWith("pagewise: ")).toList();
        assertEquals(2, said.size(), first.stderr());
        assertTrue(said.get(1).matches("pagewise: running without the AOT cache: training the AOT cache failed: "
                + Pattern.quote(dir.resolve("missing").toString()) + "/pagewise-aot-\\d+: no such file or directory"
                + Pattern.quote(" (PAGEWISE_AOT=train tries again)")), said.get(1));
        assertEquals(List.of(), aotCaches(dir));
        ExternalTools.Result second = ExternalTools.run(env, 120, launcher, "serve", "--tls=require", "--help");
        second.assertOk("the second run");
        assertEquals(List.of(), second.stderr().lines().filter(line -> line.startsWith("pagewise: ")).toList(),
                "trained again: " + second.stderr());
        env.put("PAGEWISE_AOT", "train");
        ExternalTools.Result train = ExternalTools.run(env, 120, launcher, "--version");
        assertEquals(1, train.status(), "PAGEWISE_AOT=train whose training fails: " + train.stderr());
        assertTrue(train.stderr().contains("pagewise: running without the AOT cache: training the AOT cache failed: "),
                train.stderr());
    }

    /**
     * No AOT cache and no word about one: with PAGEWISE_AOT=off, with PAGEWISE_JAVA_OPTS (which replaces every
     * default), without TLS, and on a JDK before 25; PAGEWISE_AOT=train on a JDK before 25 says why it cannot.
     */
    @Test
    void theAotCacheIsLeftAloneWhenOffOrNotForThisJdk() throws IOException {
        Path jar = Files.copy(jar(), dir.resolve("pagewise.jar"));
        String launcher = PROJECT.resolve("bin/pagewise").toString();
        Map<String, String> env = Map.of("JAVA_HOME", JAVA_HOME, "PAGEWISE_JAR", jar.toString(),
                "HOME", dir.resolve("home").toString());
        List<Map<String, String>> quiet = new java.util.ArrayList<>();
        quiet.add(Map.of("PAGEWISE_AOT", "off"));
        quiet.add(Map.of("PAGEWISE_JAVA_OPTS", "-XX:+UseSerialGC"));
        if (Runtime.version().feature() < 25) quiet.add(Map.of());
        for (Map<String, String> extra : quiet) {
            Map<String, String> with = new HashMap<>(env);
            with.putAll(extra);
            ExternalTools.Result result = ExternalTools.run(with, 60, launcher, "serve", "--tls=require", "--help");
            result.assertOk("bin/pagewise serve --tls=require --help with " + extra);
            assertEquals("", result.stderr(), "with " + extra);
        }
        assertEquals("", ExternalTools.run(env, 60, launcher, "--version").assertOk("--version").stderr());
        assertEquals(List.of(), aotCaches(dir));
        assertFalse(Files.exists(dir.resolve("home")), "nothing made in the user's cache directory");

        Map<String, String> bad = new HashMap<>(env);
        bad.put("PAGEWISE_AOT", "yes");
        ExternalTools.Result refused = ExternalTools.run(bad, 60, launcher, "--version");
        assertEquals(2, refused.status(), refused.stderr());
        assertEquals("pagewise: PAGEWISE_AOT=yes: expected on, off or train\n", refused.stderr());
        if (Runtime.version().feature() < 25) {
            Map<String, String> train = new HashMap<>(env);
            train.put("PAGEWISE_AOT", "train");
            ExternalTools.Result result = ExternalTools.run(train, 60, launcher, "--version");
            assertEquals(1, result.status(), result.stderr());
            assertTrue(result.stderr().matches("pagewise: PAGEWISE_AOT=train: the AOT cache needs JDK 25 or later; \\S+"
                    + " is " + Runtime.version().feature() + "\n"), result.stderr());
        }
    }

    /** A directory of links to the commands the launcher uses, and to mvn as given (a script, or none). */
    private Path pathWith(String mvnScript) throws IOException {
        return pathWith(dir, mvnScript);
    }

    private static Path pathWith(Path parent, String mvnScript) throws IOException {
        Path bin = Files.createDirectories(parent.resolve("path"));
        for (String command : List.of("bash", "dirname", "readlink", "find", "stat", "id", "mkdir", "touch", "rm",
                "grep", "sed", "tail", "cp")) {
            ExternalTools.Result where = ExternalTools.run(10, "bash", "-c", "command -v " + command);
            Files.createSymbolicLink(bin.resolve(command), Path.of(where.assertOk("command -v " + command).stdout().strip()));
        }
        if (mvnScript != null) {
            Path mvn = bin.resolve("mvn");
            Files.writeString(mvn, "#!/bin/sh\n" + mvnScript);
            Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return bin;
    }

    private static ExternalTools.Result launch(Path root, Path path) throws IOException {
        return ExternalTools.run(Map.of("JAVA_HOME", JAVA_HOME, "PATH", path.toString()), 60,
                root.resolve("bin/pagewise").toString(), "--version");
    }

    private static void assertRanTheOldJarSaying(ExternalTools.Result result, String reason) {
        result.assertOk("bin/pagewise --version with a stale jar that cannot be rebuilt");
        assertTrue(result.stdout().startsWith("pagewise "), result.stdout());
        List<String> said = result.stderr().lines().filter(line -> !line.contains("building the jar")).toList();
        assertEquals(1, said.size(), "one line saying why:\n" + result.stderr());
        assertTrue(said.get(0).matches("pagewise: running .*/target/pagewise-0\\.0\\.0\\.jar although the sources are newer"
                + " than .*: not rebuilt, as " + Pattern.quote(reason)), said.get(0));
    }

    @Test
    void aStaleJarStillRunsWhenMavenIsMissingSayingSo() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        assertRanTheOldJarSaying(launch(root, pathWith(null)), "mvn is not on PATH");
    }

    /** What a service user with HOME=/nonexistent got from Maven: exit 1, and no pagewise. */
    @Test
    void aStaleJarStillRunsWhenTheBuildFailsSayingWhy() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        Path path = pathWith("echo '[ERROR] Could not create local repository at /nonexistent/.m2'\n"
                + "echo '[ERROR] Re-run Maven using the -X switch'\nexit 1\n");
        assertRanTheOldJarSaying(launch(root, path), "the build failed: Could not create local repository at /nonexistent/.m2");
    }

    @Test
    void withoutAJarOrMavenItSaysWhatTheBuildNeeds() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        Files.delete(root.resolve("target/pagewise-0.0.0.jar"));
        ExternalTools.Result result = launch(root, pathWith(null));
        assertEquals(1, result.status(), result.stderr());
        assertEquals("pagewise: there is no jar in " + root + "/target, and it cannot be built: mvn is not on PATH (the"
                + " build needs JDK 17+, Maven, cmake and gcc)\n", result.stderr());
    }

    /**
     * Sources newer than the jar but not in it (a file the build does not change, or a checkout's new timestamps):
     * Maven leaves the jar as it was, and before this every run built again (34 s for --version).
     */
    @Test
    void aBuildThatLeavesTheJarAsItWasIsNotRepeatedOnEveryRun() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        Path builds = dir.resolve("builds");
        Path path = pathWith("echo built >> '" + builds + "'\n");
        launch(root, path).assertOk("first run");
        ExternalTools.Result second = launch(root, path).assertOk("second run");
        assertEquals(1, Files.readAllLines(builds).size(), "built again although nothing changed since: " + second.stderr());
        assertEquals("", second.stderr());
        Files.writeString(root.resolve("java/Edited.java"), "class Edited { int edited; }\n");
        Files.setLastModifiedTime(root.resolve("java/Edited.java"), FileTime.from(Instant.now().plusSeconds(5)));
        launch(root, path).assertOk("third run, after an edit");
        assertEquals(2, Files.readAllLines(builds).size(), "an edit since the last build builds again");
    }

    /** The jar's FFM classes are compiled from java22/: an edit there builds again, as one in java/ does. */
    @Test
    void anEditInJava22BuildsAgain() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        Path builds = dir.resolve("builds");
        Path path = pathWith("echo built >> '" + builds + "'\n");
        launch(root, path).assertOk("first run");
        Path edited = Files.createDirectories(root.resolve("java22")).resolve("Edited.java");
        Files.writeString(edited, "class Edited {}\n");
        Files.setLastModifiedTime(edited, FileTime.from(Instant.now().plusSeconds(5)));
        launch(root, path).assertOk("second run, after an edit in java22/");
        assertEquals(2, Files.readAllLines(builds).size(), "an edit in java22/ since the last build builds again");
    }

    /**
     * The launcher builds the library's module (java/) and what it needs (the parent pom), not the engine
     * integrations beside it in the reactor, which would need their engines' jars to run --version.
     */
    @Test
    void theBuildIsTheLibrarysModuleAlone() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        Path arguments = dir.resolve("arguments");
        Path path = pathWith("printf '%s\\n' \"$@\" > '" + arguments + "'\n");
        launch(root, path).assertOk("bin/pagewise --version, building");
        String build = String.join(" ", Files.readAllLines(arguments));
        assertTrue(build.contains("-f " + root.resolve("pom.xml") + " -pl java -am "), build);
    }

    /** bin/pagewise shows the build's output only on failure, but its warnings (a platform not built) always. */
    @Test
    void theBuildsWarningsArePassedOnWhenItSucceeds() throws IOException {
        Path root = staleCheckout(dir.resolve("clone"));
        String warning = "native/build.sh: WARNING: linux-aarch64 is not built: that needs aarch64-linux-gnu-gcc"
                + " (Debian packages gcc-aarch64-linux-gnu libc6-dev-arm64-cross). This jar carries linux-x86_64 alone.";
        Path path = pathWith("echo '-- Configuring done'\necho \"" + warning + "\" >&2\ntouch '"
                + root.resolve("target/pagewise-0.0.0.jar") + "'\n");
        ExternalTools.Result result = launch(root, path).assertOk("bin/pagewise --version, building");
        assertEquals("pagewise: building the jar (mvn package, tests skipped)...\n" + warning + "\n", result.stderr());
    }

    /**
     * A service user cannot write to the checkout it runs from (and root should not build one it does not own): the
     * launcher runs the jar there is, without trying Maven.
     */
    @Test
    void aCheckoutTheUserCannotWriteToRunsItsJarWithoutBuilding() throws IOException {
        if (ServeOptions.effectiveUid() != 0) ExternalTools.unavailable("running as nobody needs root", "the CI runs as root");
        ExternalTools.require("setpriv");
        Path open = Files.createTempDirectory(Path.of("/tmp"), "pagewise-launcher-");
        try {
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxr-xr-x"));
            Path root = staleCheckout(open.resolve("clone"));
            Path path = pathWith(open, "echo '[ERROR] mvn ran'\nexit 1\n");
            String setpriv = ExternalTools.run(10, "bash", "-c", "command -v setpriv").stdout().strip();
            ExternalTools.Result result = ExternalTools.run(Map.of(), 60, "env", "-i", "HOME=/nonexistent",
                    "PATH=" + path, "JAVA_HOME=" + JAVA_HOME, setpriv, "--reuid=65534", "--regid=65534",
                    "--clear-groups", root.resolve("bin/pagewise").toString(), "--version");
            assertFalse(result.stderr().contains("building the jar"), result.stderr());
            assertRanTheOldJarSaying(result, "nobody cannot write to " + root);
        } finally {
            ExternalTools.run(30, "rm", "-rf", open.toString());
        }
    }

    /** Root running another user's checkout (sudo bin/pagewise) runs its jar rather than leave root's files there. */
    @Test
    void rootDoesNotBuildAnotherUsersCheckout() throws IOException {
        if (ServeOptions.effectiveUid() != 0) ExternalTools.unavailable("changing owners needs root", "the CI runs as root");
        Path root = staleCheckout(dir.resolve("clone"));
        ExternalTools.run(10, "chown", "-R", "65534:65534", root.resolve("target").toString()).assertOk("chown");
        ExternalTools.Result result = launch(root, pathWith("echo '[ERROR] mvn ran'\nexit 1\n"));
        assertRanTheOldJarSaying(result, root + "/target is not root's");
    }
}
