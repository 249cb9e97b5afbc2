package io.pagewise;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What the library lets an application reach, read from the compiled classes: no native method outside the class
 * that wraps it, and no type of a non-exported package in the API of the exported ones (those module-info exports).
 */
class ApiBoundaryTest {
    private static final Set<String> EXPORTED = exportedPackages();

    /** The packages the compiled module-info exports. */
    private static Set<String> exportedPackages() {
        try (java.io.InputStream in = Files.newInputStream(classesRoot().resolve("module-info.class"))) {
            Set<String> exported = new java.util.TreeSet<>();
            java.lang.module.ModuleDescriptor.read(in).exports().forEach(e -> exported.add(e.source()));
            return exported;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read module-info.class", e);
        }
    }

    private static Path classesRoot() throws java.net.URISyntaxException {
        return Path.of(Native.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /** Every class of the library, loaded without running its initializer. */
    private static List<Class<?>> libraryClasses() throws Exception {
        Path root = classesRoot();
        List<Class<?>> classes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root.resolve("io/pagewise"))) {
            for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".class"))::iterator) {
                String name = root.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                classes.add(Class.forName(name, false, ApiBoundaryTest.class.getClassLoader()));
            }
        }
        assertTrue(classes.size() > 50, "found " + classes.size() + " classes under " + root);
        return classes;
    }

    @Test
    void nativeMethodsArePrivateToTheClassesThatWrapThem() throws Exception {
        List<String> natives = new ArrayList<>();
        List<String> reachable = new ArrayList<>();
        for (Class<?> type : libraryClasses()) {
            for (Method method : type.getDeclaredMethods()) {
                if (!Modifier.isNative(method.getModifiers())) continue;
                natives.add(method.toString());
                if (!Modifier.isPrivate(method.getModifiers())) reachable.add(method.toString());
            }
        }
        assertTrue(natives.size() >= 15, "natives found: " + natives);
        assertEquals(List.of(), reachable, "native methods that are not private");
    }

    @Test
    void exportedSignaturesMentionOnlyExportedTypes() throws Exception {
        List<String> leaks = new ArrayList<>();
        int checked = 0;
        for (Class<?> type : libraryClasses()) {
            if (!EXPORTED.contains(type.getPackageName()) || !visible(type)) continue;
            checked++;
            check(type + " extends", type.getGenericSuperclass(), leaks);
            for (Type parent : type.getGenericInterfaces()) check(type + " implements", parent, leaks);
            for (Field field : type.getDeclaredFields()) {
                if (visible(field.getModifiers())) check(field.toString(), field.getGenericType(), leaks);
            }
            for (Constructor<?> constructor : type.getDeclaredConstructors()) checkExecutable(constructor, leaks);
            for (Method method : type.getDeclaredMethods()) {
                if (!method.isSynthetic()) checkExecutable(method, leaks);
            }
        }
        assertTrue(checked > 30, "checked " + checked + " public types");
        assertEquals(List.of(), leaks, "non-exported types in the exported API");
    }

    /** Public or protected, and reachable: nested types only inside visible ones. */
    private static boolean visible(Class<?> type) {
        return visible(type.getModifiers()) && (type.getDeclaringClass() == null || visible(type.getDeclaringClass()));
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static void checkExecutable(Executable executable, List<String> leaks) {
        if (!visible(executable.getModifiers())) return;
        String where = executable.toGenericString();
        for (Type parameter : executable.getGenericParameterTypes()) check(where, parameter, leaks);
        for (Type thrown : executable.getGenericExceptionTypes()) check(where, thrown, leaks);
        if (executable instanceof Method) check(where, ((Method) executable).getGenericReturnType(), leaks);
    }

    private static void check(String where, Type type, List<String> leaks) {
        if (type == null) return;
        if (type instanceof Class) {
            Class<?> c = (Class<?>) type;
            while (c.isArray()) c = c.getComponentType();
            String pkg = c.getPackageName();
            if (pkg.startsWith("io.pagewise") && !EXPORTED.contains(pkg)) leaks.add(where + " -> " + c.getName());
        } else if (type instanceof ParameterizedType) {
            check(where, ((ParameterizedType) type).getRawType(), leaks);
            for (Type argument : ((ParameterizedType) type).getActualTypeArguments()) check(where, argument, leaks);
        } else if (type instanceof GenericArrayType) {
            check(where, ((GenericArrayType) type).getGenericComponentType(), leaks);
        } else if (type instanceof WildcardType) {
            for (Type bound : ((WildcardType) type).getUpperBounds()) check(where, bound, leaks);
            for (Type bound : ((WildcardType) type).getLowerBounds()) check(where, bound, leaks);
        } else if (type instanceof TypeVariable) {
            for (Type bound : ((TypeVariable<?>) type).getBounds()) {
                // Only the bound's class: its arguments may name the variable itself (T extends Comparable<T>).
                check(where, bound instanceof ParameterizedType ? ((ParameterizedType) bound).getRawType() : bound, leaks);
            }
        }
    }
}
