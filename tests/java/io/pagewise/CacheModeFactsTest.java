package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The one description of the cache modes: what each needs and does, pinned here mode by mode, and the table in
 * {@link CacheMode}'s javadoc says the same. That the modes behave as these facts say is checked where each is
 * used: {@code FuaAndFlushTest} (flushSyncs, syncsEveryWrite), {@code FileDeviceTest} and
 * {@code ClientInteropTest} (prefetches as advertised CACHE and measured residency, isDirect as the minimum block
 * size), {@code FallbackPathTest} (needsNative, isAvailable), {@code EvictResidencyTest} (evictsBehind).
 */
class CacheModeFactsTest {
    private static final List<String> QUESTIONS =
            List.of("needsNative", "isDirect", "evictsBehind", "prefetches", "flushSyncs", "syncsEveryWrite");

    /** The facts, in the order of {@link #QUESTIONS}. */
    private static final String FACTS = """
            WRITEBACK     no  no  no  yes yes no
            WRITETHROUGH  no  no  no  yes yes yes
            UNSAFE        no  no  no  yes no  no
            DIRECT        yes yes no  no  yes no
            DIRECTSYNC    yes yes no  no  yes yes
            EVICT         yes no  yes yes yes no
            DONTCACHE     yes no  yes no  yes no
            """;

    private static Map<String, List<String>> table(String text, Pattern row) {
        Map<String, List<String>> rows = new LinkedHashMap<>();
        Matcher m = row.matcher(text);
        while (m.find()) {
            List<String> words = new ArrayList<>();
            Matcher word = Pattern.compile("\\b(yes|no)\\b").matcher(m.group(2));
            while (word.find()) words.add(word.group(1));
            rows.put(m.group(1), words);
        }
        return rows;
    }

    private static Map<String, List<String>> expected() {
        return table(FACTS, Pattern.compile("(?m)^\\s*([A-Z]+)\\s+([a-z ]+)$"));
    }

    private static List<String> answers(CacheMode mode) {
        boolean[] answers = {mode.needsNative(), mode.isDirect(), mode.evictsBehind(), mode.prefetches(),
            mode.flushSyncs(), mode.syncsEveryWrite()};
        String[] words = new String[answers.length];
        for (int i = 0; i < answers.length; i++) words[i] = answers[i] ? "yes" : "no";
        return List.of(words);
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void eachModeAnswersAsTheTableSays(CacheMode mode) {
        List<String> want = expected().get(mode.name());
        List<String> got = answers(mode);
        for (int i = 0; i < QUESTIONS.size(); i++) {
            assertEquals(want.get(i), got.get(i), mode + "." + QUESTIONS.get(i) + "()");
        }
    }

    @ParameterizedTest
    @EnumSource(CacheMode.class)
    void aModeIsAvailableWhereItNeedsNothingThisJvmLacks(CacheMode mode) {
        assertEquals(!mode.needsNative() || Native.isAvailable(), mode.isAvailable(), mode.toString());
    }

    @Test
    void theTableHasOneRowPerModeInDeclarationOrder() {
        assertEquals(Arrays.stream(CacheMode.values()).map(Enum::name).collect(Collectors.toList()),
                List.copyOf(expected().keySet()));
    }

    /** The javadoc table users read, "<tr><td>MODE</td><td>yes</td>...", must say what the code answers. */
    @Test
    void theJavadocTableSaysTheSame() throws IOException {
        // The javadoc with its line breaks and leading asterisks taken out.
        String javadoc = Files.readString(Path.of("java/io/pagewise/CacheMode.java")).replaceAll("\\s*\\*\\s*", "");
        Map<String, List<String>> documented = table(javadoc,
                Pattern.compile("<tr><td>([A-Z]+)</td>((?:<td>(?:yes|no)</td>)+)</tr>"));
        Matcher questions = Pattern.compile("<th>\\{@link #(\\w+)\\}</th>").matcher(javadoc);
        List<String> documentedQuestions = new ArrayList<>();
        while (questions.find()) documentedQuestions.add(questions.group(1));
        assertEquals(QUESTIONS, documentedQuestions, "the javadoc table's columns");
        Map<String, List<String>> answered = new LinkedHashMap<>();
        for (CacheMode mode : CacheMode.values()) answered.put(mode.name(), answers(mode));
        assertEquals(answered, documented);
    }
}
