package io.pagewise.cli;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;

/**
 * The option parsing of {@code pagewise serve} and {@code pagewise copy}, fed arbitrary arguments, without opening
 * or serving anything. Invariant: a command line is parsed (or asks for help) or refused with a
 * {@link UsageException}, which the commands print with their usage and exit 2; anything else escapes as a stack
 * trace. The input is the command's arguments separated by NUL bytes (which no real argument holds); its first
 * byte picks the command: even serve, odd copy. Seeds: tests/resources/io/pagewise/cli/CliArgumentsFuzzTestInputs/parse/.
 */
@Tag("fuzz")
class CliArgumentsFuzzTest {
    /** --bind values InetAddress takes as literals; any other value would be a DNS query for each input. */
    private static final Pattern LITERAL_ADDRESS = Pattern.compile("(\\d{1,3}\\.){3}\\d{1,3}|[\\[:0-9a-fA-F][\\[\\]:.%0-9a-zA-Z]*:[\\[\\]:.%0-9a-zA-Z]*");

    @FuzzTest
    void parse(byte[] input) {
        if (input.length == 0) return;
        boolean copy = (input[0] & 1) != 0;
        String joined = new String(input, 1, input.length - 1, StandardCharsets.UTF_8);
        List<String> args = joined.isEmpty() ? List.of() : Arrays.asList(joined.split("\0", -1));
        if (!copy && namesAHostToBind(args)) return;
        try {
            if (copy) {
                CopyCommand.parse(args);
            } else {
                ServeCommand.parse(args);
            }
        } catch (UsageException expected) {
            if (expected.getMessage() == null || expected.getMessage().isEmpty()) {
                throw new AssertionError("a usage error without a message", expected);
            }
        }
    }

    /** Whether --bind (or one of its other names, -b, -i, --ipaddr, alone or in a group) has a value to look up. */
    private static boolean namesAHostToBind(List<String> args) {
        CliOption<ServeOptions> bind = ServeCommand.TABLE.options().stream()
                .filter(o -> o.longNames().contains("--bind")).findFirst().orElseThrow();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String value = null;
            if (arg.equals("--")) return false;
            if (arg.startsWith("--")) {
                int eq = arg.indexOf('=');
                String name = eq < 0 ? arg : arg.substring(0, eq);
                if (bind.longNames().contains(name)) value = eq >= 0 ? arg.substring(eq + 1) : i + 1 < args.size() ? args.get(i + 1) : null;
            } else if (arg.startsWith("-")) {
                // A group of short options: the first that takes a value takes the rest, or the next argument.
                for (int at = 1; at < arg.length(); at++) {
                    String name = "-" + arg.charAt(at);
                    CliOption<ServeOptions> option = ServeCommand.TABLE.options().stream()
                            .filter(o -> o.shortNames().contains(name)).findFirst().orElse(null);
                    if (option == null || option.arity() != CliOption.Arity.REQUIRED) continue;
                    if (option == bind) value = at + 1 < arg.length() ? arg.substring(at + 1) : i + 1 < args.size() ? args.get(i + 1) : null;
                    break;
                }
            }
            if (value != null && !value.isEmpty() && !LITERAL_ADDRESS.matcher(value).matches()) return true;
        }
        return false;
    }
}
