/**
 * Uses pagewise the way an application would: through the module's exported API only, with pagewise's log routed
 * into the application's own {@link System.LoggerFinder}.
 */
module example.consumer {
    requires io.pagewise;

    provides java.lang.System.LoggerFinder with example.consumer.CollectedLog;
}
