/**
 * The {@code pagewise} command line: {@code cachestats} and {@code evict} (in {@code Main}, which also picks the
 * command), {@code serve}, {@code copy} and {@code checksum}.
 *
 * <p>A class that belongs to one command starts with the command's verb. {@code <Verb>Command} is the public entry:
 * the command's option table, its parsing, and the hand-over to a run ({@code ServeCommand}, {@code CopyCommand},
 * {@code ChecksumCommand}). {@code <Verb>Run} is one run of it ({@code ServeRun}, {@code CopyRun}). Every other part
 * is {@code <Verb><Noun>}: {@code ServeOptions}, {@code ServeExports}, {@code ServeServerSetup}, {@code ServeDevices},
 * {@code ServeArguments}, {@code ServeCaptive}. What is about no command in particular keeps a neutral name, even
 * where one command alone uses it today: the option table ({@code OptionTable}, {@code CliOption},
 * {@code Arguments}, {@code UsageException}), {@code Endpoint}, {@code ProgressReporter}, {@code MetricsEndpoint}
 * and the loggers.
 */
package io.pagewise.cli;
