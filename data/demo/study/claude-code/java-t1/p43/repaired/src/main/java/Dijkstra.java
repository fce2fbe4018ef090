import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeMap;

/**
 * Dijkstra shortest paths on a weighted directed graph read from a text file.
 *
 * <p>Input: one edge per line, "FROM TO WEIGHT"; blank lines and lines starting with '#'
 * are ignored. Usage: java Dijkstra graph.txt SOURCE [TARGET]
 */
public class Dijkstra {

    record Edge(String to, double weight) {}

    private final Map<String, List<Edge>> adjacency = new TreeMap<>();

    void addEdge(String from, String to, double weight) {
        if (weight < 0) {
            throw new IllegalArgumentException("negative weight " + weight + " on " + from + "->" + to);
        }
        adjacency.computeIfAbsent(from, k -> new ArrayList<>()).add(new Edge(to, weight));
        adjacency.computeIfAbsent(to, k -> new ArrayList<>());
    }

    static Dijkstra read(Path file) throws IOException {
        Dijkstra g = new Dijkstra();
        int lineNo = 0;
        for (String line : Files.readAllLines(file)) {
            lineNo++;
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+");
            if (f.length != 3) {
                throw new IllegalArgumentException(file + ":" + lineNo + ": want FROM TO WEIGHT");
            }
            g.addEdge(f[0], f[1], Double.parseDouble(f[2]));
        }
        return g;
    }

    /** Returns the distance to every node and fills previous with the shortest-path tree. */
    Map<String, Double> shortestPaths(String source, Map<String, String> previous) {
        if (!adjacency.containsKey(source)) {
            throw new IllegalArgumentException("unknown node " + source);
        }
        Map<String, Double> dist = new HashMap<>();
        for (String node : adjacency.keySet()) {
            dist.put(node, Double.POSITIVE_INFINITY);
        }
        dist.put(source, 0.0);
        PriorityQueue<Map.Entry<String, Double>> queue =
                new PriorityQueue<>(Map.Entry.comparingByValue());
        queue.add(Map.entry(source, 0.0));
        while (!queue.isEmpty()) {
            Map.Entry<String, Double> head = queue.poll();
            String u = head.getKey();
            if (head.getValue() > dist.get(u)) {
                continue;
            }
            for (Edge e : adjacency.get(u)) {
                double alt = dist.get(u) + e.weight();
                if (alt < dist.get(e.to())) {
                    dist.put(e.to(), alt);
                    previous.put(e.to(), u);
                    queue.add(Map.entry(e.to(), alt));
                }
            }
        }
        return dist;
    }

    static List<String> path(Map<String, String> previous, String source, String target) {
        Deque<String> stack = new ArrayDeque<>();
        for (String at = target; at != null; at = previous.get(at)) {
            stack.push(at);
            if (at.equals(source)) {
                return new ArrayList<>(stack);
            }
        }
        return List.of();
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: java Dijkstra graph.txt SOURCE [TARGET]");
            System.exit(64);
        }
        Dijkstra g = read(Path.of(args[0]));
        Map<String, String> previous = new HashMap<>();
        Map<String, Double> dist = g.shortestPaths(args[1], previous);
        for (String node : g.adjacency.keySet()) {
            double d = dist.get(node);
            String route = Double.isInfinite(d) ? "unreachable"
                    : String.join(" -> ", path(previous, args[1], node));
            System.out.printf("%-4s %8s  %s%n", node, Double.isInfinite(d) ? "inf" : String.format("%.1f", d), route);
        }
        if (args.length > 2) {
            List<String> p = path(previous, args[1], args[2]);
            System.out.println(p.isEmpty() ? "no path to " + args[2]
                    : "shortest " + args[1] + " -> " + args[2] + ": " + String.format("%.1f", dist.get(args[2])));
        }
    }
}
