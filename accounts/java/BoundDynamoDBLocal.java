// AWS DynamoDB Local listening on one address: `java BoundDynamoDBLocal <address> <its options>`.
//
// DynamoDB Local has no option for the address it listens on: its Jetty server is made with
// a port alone, so it listens on every interface. This builds the server exactly as
// DynamoDB Local's own main (ServerRunner) does, from the same options, then sets the
// address on its one connector before starting it. It reads a private field of
// DynamoDBProxyServer (`server`), which is why accounts/dynamodb_local.py pins the release.
// accounts/dynamodb_local.py compiles this file once, with the Java it runs.

import java.lang.reflect.Field;
import java.util.Arrays;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class BoundDynamoDBLocal {
    public static void main(String[] args) throws Exception {
        String address = args[0];
        String[] options = Arrays.copyOfRange(args, 1, args.length);
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(options);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        for (Connector connector : server.getConnectors()) {
            ((ServerConnector) connector).setHost(address);
        }
        proxy.start();
    }
}
