// JitHot.java - Java for tests/92-jit.t: hotJava, compiled by HotSpot's
// JIT, called from main for SECONDS (argument) of wall time.
public class JitHot {
	static long hotJava(long n) {
		long s = 0;
		for (long i = 0; i < n; i++)
			s = (s + i * 7) % 1000003;
		return s;
	}

	public static void main(String[] args) {
		long end = System.currentTimeMillis() + (long)(Double.parseDouble(args[0]) * 1000);
		long x = 0;
		while (System.currentTimeMillis() < end)
			x += hotJava(3000000);
		System.out.println(x > 0 ? "done" : "zero");
	}
}
