/**
 * The part of autocannon 8's API that the benchmark uses; the package ships no types
 * and @types/autocannon is not installed.
 */
declare module 'autocannon' {
  // Function and namespace merge, so that callers can name autocannon.Result.
  namespace autocannon {
    interface Options {
      url: string;
      method?: 'GET' | 'POST';
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds between two request-rate samples. */
      sampleInt?: number;
      warmup?: { connections?: number; duration?: number };
    }

    /** Latencies are in milliseconds, at 1 ms resolution. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
      p99_9: number;
    }

    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }
  }

  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>;
  export = autocannon;
}
