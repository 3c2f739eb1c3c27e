package hammer.hdrcheck;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.HdrHistogram.Histogram;

/**
 * Reads and writes HdrHistogram V2 compressed base64 with the real HdrHistogram library, for
 * hammer's compatibility tests (tests/integration/test_hdr_compat.py).
 *
 * <pre>
 * decode        stdin: one base64 histogram per line; stdout, per line:
 *               "total min max p50 p90 p99 p99.9" (integers, the histogram's units)
 * distribution  stdin: one base64 histogram; stdout: outputPercentileDistribution(out, 1000.0)
 * encode [LOWEST HIGHEST DIGITS]
 *               stdin: one value per line, "VALUE" or "VALUE COUNT"; stdout: the base64 of
 *               encodeIntoCompressedByteBuffer of a Histogram(LOWEST, HIGHEST, DIGITS)
 *               (default 1 3600000000 3, hammer's layout)
 * </pre>
 */
public final class HdrCheck {
  private static final double[] PERCENTILES = {50.0, 90.0, 99.0, 99.9};

  private HdrCheck() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      usage();
    }
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
    switch (args[0]) {
      case "decode":
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          if (line.isBlank()) {
            continue;
          }
          Histogram h = decode(line.trim());
          StringBuilder row = new StringBuilder();
          row.append(h.getTotalCount()).append(' ').append(h.getMinValue()).append(' ')
              .append(h.getMaxValue());
          for (double p : PERCENTILES) {
            row.append(' ').append(h.getValueAtPercentile(p));
          }
          out.println(row);
        }
        break;
      case "distribution":
        decode(in.readLine().trim()).outputPercentileDistribution(out, 1000.0);
        break;
      case "encode":
        long lowest = args.length > 1 ? Long.parseLong(args[1]) : 1;
        long highest = args.length > 2 ? Long.parseLong(args[2]) : 3_600_000_000L;
        int digits = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Histogram h = new Histogram(lowest, highest, digits);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          String[] fields = line.trim().split("\\s+");
          if (fields[0].isEmpty()) {
            continue;
          }
          long count = fields.length > 1 ? Long.parseLong(fields[1]) : 1;
          h.recordValueWithCount(Long.parseLong(fields[0]), count);
        }
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.write(buffer.array(), 0, length);
        out.println(Base64.getEncoder().encodeToString(bytes.toByteArray()));
        break;
      default:
        usage();
    }
    out.flush();
  }

  private static Histogram decode(String base64) throws Exception {
    return Histogram.decodeFromCompressedByteBuffer(
        ByteBuffer.wrap(Base64.getDecoder().decode(base64)), 0);
  }

  private static void usage() {
    System.err.println("usage: hdr-check decode | distribution | encode [LOWEST HIGHEST DIGITS]");
    System.exit(2);
  }
}
