/**
 * What the operating system reports about a file, in the terms of the API and of the code under it alike: a failed
 * system call ({@link io.pagewise.system.SystemCallFailure}, {@link io.pagewise.system.NativeIOException}) and the
 * alignment O_DIRECT needs ({@link io.pagewise.system.Alignment}). It uses no other package of the library, so that
 * {@code io.pagewise} can be built on {@code io.pagewise.internal} without the two naming each other.
 */
package io.pagewise.system;
