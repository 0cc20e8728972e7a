// The test bed's optional `mongo-memory` service: mongo-java-server's in-memory backend on
// 127.0.0.1:<port>, run from source by `java -cp '<jars>/*' Launcher.java <port>`.
//
// The backend reports MongoDB 4.0 (wire version 7) and PyMongo 4 refuses servers older than 4.4
// (wire version 9), so it announces 6.0 (wire 17): the worker uses only find with $in, the
// projection, insert and delete, which it serves. It keeps the documents in memory and answers a
// find by `_id` in about a millisecond where FerretDB on SQLite scans the whole collection (tens
// of milliseconds for the benchmark's corpus), so the benchmark can put a figure on that scan.
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.util.List;

public class Launcher {
    public static void main(String[] args) throws Exception {
        MongoVersion announced = new MongoVersion() {
            @Override
            public List<Integer> getVersionArray() {
                return List.of(6, 0, 0);
            }

            @Override
            public int getWireVersion() {
                return 17;
            }
        };
        MongoServer server = new MongoServer(new MemoryBackend().version(announced));
        server.bind("127.0.0.1", Integer.parseInt(args[0]));
        System.out.println("mongo-java-server listening on 127.0.0.1:" + args[0]);
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        Thread.currentThread().join();
    }
}
