package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the README promises a newcomer: two set-up commands, an install step, and a Java example that compiles as shown. */
class ReadmeTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));

    private static String readme() throws IOException {
        return Files.readString(PROJECT.resolve("README.md"));
    }

    private static String section(String text, String heading) {
        int start = text.indexOf("\n" + heading + "\n");
        assertTrue(start >= 0, "README.md has no section " + heading);
        int end = text.indexOf("\n## ", start + heading.length() + 1);
        return text.substring(start, end < 0 ? text.length() : end);
    }

    private static List<String> codeBlocks(String text, String language) {
        List<String> blocks = new ArrayList<>();
        Matcher m = Pattern.compile("(?s)```" + language + "\n(.*?)```").matcher(text);
        while (m.find()) blocks.add(m.group(1));
        return blocks;
    }

    @Test
    void keepsExactlyTheTwoSetUpCommands() throws IOException {
        List<String> blocks = codeBlocks(section(readme(), "## Two commands"), "sh");
        assertEquals(1, blocks.size(), "one shell block in Two commands");
        List<String> commands = blocks.get(0).lines().map(line -> line.replaceAll("#.*", "").strip()).toList();
        assertEquals(List.of("bin/pagewise serve", "mvn verify"), commands);
    }

    @Test
    void theDependencyNamesThePomsVersionBesideTheStepThatInstallsIt() throws IOException {
        // The library's pom (java/) takes its version from the parent it names, the top-level pom.
        String pom = Files.readString(PROJECT.resolve("java/pom.xml"));
        Matcher version = Pattern.compile("(?s)<parent>.*?<version>([^<]+)</version>.*?</parent>\\s*"
                + "(?:<!--.*?-->\\s*)*<artifactId>pagewise</artifactId>").matcher(pom);
        assertTrue(version.find(), "java/pom.xml's version, the artifact io.pagewise:pagewise's");
        String java = section(readme(), "## Use it from Java");
        assertTrue(java.contains("<artifactId>pagewise</artifactId><version>" + version.group(1) + "</version>"),
                "the dependency snippet names version " + version.group(1) + ":\n" + java);
        assertTrue(codeBlocks(java, "sh").stream().anyMatch(block -> block.strip().equals("mvn -q install -DskipTests")),
                "the section shows the install step");
    }

    /** The example is compiled exactly as shown against the library, then run on a file of its own. */
    @Test
    void theJavaExampleCompilesAndRunsAsShown(@TempDir Path dir) throws Exception {
        List<String> blocks = codeBlocks(section(readme(), "## Use it from Java"), "java");
        assertEquals(1, blocks.size(), "one Java block in Use it from Java");
        String source = blocks.get(0);
        Matcher name = Pattern.compile("public class (\\w+)").matcher(source);
        assertTrue(name.find(), "the example declares a public class:\n" + source);
        Path file = dir.resolve(name.group(1) + ".java");
        Files.writeString(file, source);

        String classPath = System.getProperty("java.class.path");
        Path javaBin = Path.of(System.getProperty("java.home"), "bin");
        String compiled = run(dir, javaBin.resolve("javac").toString(), "-Xlint:all", "-Werror", "-cp", classPath,
                "-d", dir.toString(), file.toString());
        assertEquals("", compiled, "javac on README.md's Java example");

        Path disk = dir.resolve("disk.img");
        String printed = run(dir, javaBin.resolve("java").toString(), "--enable-native-access=ALL-UNNAMED",
                "-cp", dir + java.io.File.pathSeparator + classPath, name.group(1), disk.toString());
        List<String> lines = printed.lines().toList();
        assertEquals(2, lines.size(), "what the example printed: " + lines);
        assertEquals("read " + Files.size(disk) + " bytes", lines.get(0));
        assertTrue(Files.size(disk) >= 1 << 20, "it wrote at least 1 MiB");
        double cached = Double.parseDouble(lines.get(1).replace(" % cached", ""));
        assertTrue(cached <= 1.0, "EVICT left " + cached + " % of the example's file cached");
    }

    /** Runs a JDK tool in {@code dir}; fails unless it exits 0 within a minute. {@return what it printed} */
    private static String run(Path dir, String... command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        process.getOutputStream().close();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError(String.join(" ", command) + " did not end within 60 s");
        }
        String printed = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), String.join(" ", command) + " printed:\n" + printed);
        return printed;
    }

    /**
     * Every relative link of the README, the changelog, docs/ and docs/bench/ names a file that exists and, when it
     * names a heading (#anchor) of a Markdown file, a heading that file has: headings get renamed and pages moved.
     */
    @Test
    void everyRelativeLinkResolves() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(PROJECT.resolve("README.md"), PROJECT.resolve("CHANGELOG.md")));
        for (String dir : List.of("docs", "docs/bench")) {
            try (Stream<Path> docs = Files.list(PROJECT.resolve(dir))) {
                docs.filter(f -> f.toString().endsWith(".md")).sorted().forEach(pages::add);
            }
        }
        Pattern link = Pattern.compile("\\]\\(([^)#\\s]*)(?:#([^)\\s]*))?\\)");
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            Matcher m = link.matcher(Files.readString(page));
            while (m.find()) {
                String target = m.group(1);
                String anchor = m.group(2);
                if (target.matches("[a-z]+:.*")) continue;
                Path file = target.isEmpty() ? page : page.getParent().resolve(target);
                String where = PROJECT.relativize(page) + ": " + m.group().substring(1);
                if ((target.isEmpty() && anchor == null) || !Files.exists(file)) broken.add(where);
                else if (anchor != null && (target.isEmpty() || target.endsWith(".md")) && !anchors(file).contains(anchor)) {
                    broken.add(where + " (no such heading)");
                }
            }
        }
        assertEquals(List.of(), broken, "links to files or headings that do not exist");
    }

    private static final Pattern HEADING = Pattern.compile("#{1,6}\\s+(.*?)\\s*#*\\s*");

    /**
     * The anchors GitHub gives the headings of a Markdown file: lower case, everything but letters, digits, spaces,
     * hyphens and underscores dropped, spaces as hyphens, a repeated one numbered from -1. Lines in fenced code blocks
     * are not headings.
     */
    private static Set<String> anchors(Path file) throws IOException {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(file)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            Matcher heading = HEADING.matcher(line);
            if (fenced || !heading.matches()) continue;
            String slug = heading.group(1).toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
            int times = seen.merge(slug, 1, Integer::sum);
            anchors.add(times == 1 ? slug : slug + "-" + (times - 1));
        }
        return anchors;
    }
}
