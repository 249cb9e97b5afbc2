/** Uses pagewise the way an application would: through the module's exported API only. */
module example.consumer {
    requires io.pagewise;
}
