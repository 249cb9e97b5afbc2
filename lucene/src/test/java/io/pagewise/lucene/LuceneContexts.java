package io.pagewise.lucene;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.lucene.store.FlushInfo;
import org.apache.lucene.store.IOContext;
import org.apache.lucene.store.IndexInput;
import org.apache.lucene.store.MergeInfo;

/**
 * IOContexts and IndexInput calls the tests need on both Lucene lines. The tests are compiled against Lucene 9, where
 * a merge or flush context is made with IOContext's constructors; Lucene 10 made IOContext an interface with the
 * factories merge(MergeInfo) and flush(FlushInfo). MergeInfo's and FlushInfo's constructors are the same on both.
 */
final class LuceneContexts {
    private LuceneContexts() {}

    /** {@return a merge context, as IndexWriter makes for the files a merge reads and writes} */
    static IOContext merge(long estimatedBytes) {
        return make("merge", MergeInfo.class, new MergeInfo(1000, estimatedBytes, false, 1));
    }

    /** {@return a flush context, as IndexWriter makes for the files of a flushed segment} */
    static IOContext flush(long estimatedBytes) {
        return make("flush", FlushInfo.class, new FlushInfo(1000, estimatedBytes));
    }

    private static IOContext make(String factory, Class<?> infoType, Object info) {
        try {
            Method lucene10 = IOContext.class.getMethod(factory, infoType);
            return (IOContext) lucene10.invoke(null, info);
        } catch (NoSuchMethodException lucene9) {
            try {
                return IOContext.class.getConstructor(infoType).newInstance(info);
            } catch (ReflectiveOperationException e) {
                e.addSuppressed(lucene9);
                throw new AssertionError("neither Lucene 9's nor Lucene 10's IOContext for " + factory, e);
            }
        } catch (IllegalAccessException | InvocationTargetException e) {
            throw new AssertionError("IOContext." + factory, e);
        }
    }

    /** {@return IndexInput.prefetch(long, long), which Lucene 10 has and Lucene 9 has not; null on Lucene 9} */
    static Method prefetchMethod() {
        try {
            return IndexInput.class.getMethod("prefetch", long.class, long.class);
        } catch (NoSuchMethodException lucene9) {
            return null;
        }
    }
}
