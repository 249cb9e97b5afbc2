package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The suite runs twice: on JDK 17 from the compiled classes (JNI), and on JDK 22+ against the multi-release jar
 * (pom.xml, failsafe execution ffm-suite, which sets pagewise.binding=FFM). This makes sure each run goes through
 * the binding it is meant to test, so that a jar without its FFM classes cannot pass as tested.
 */
class BindingTest {
    @Test
    void eachRunGoesThroughTheBindingItIsFor() {
        String expected = System.getProperty("pagewise.binding", "JNI");
        assertTrue(Native.isAvailable(), "native calls unavailable: " + Native.loadError());
        assertEquals(expected, Native.binding(), "on Java " + Runtime.version());
    }
}
