# The seed mapper's engine, reduced to a time-limited closed loop for bench/load_engine.py:
# Ruby + curb Curl::Multi, a new Curl::Easy per request with follow_location and the cookie
# engine on, success/failure blocks that buffer "URL<TAB>seconds" records, topped up from the
# perform block (the seed's blog post describes that design; this is a rewrite, not a copy).
# Records go to stdout (the bench sends them to /dev/null); the last line on stderr is
#   completed=<ok> failed=<failed> seconds=<wall>
# Usage: ruby curb_seed_driver.rb URL CONCURRENCY SECONDS
require 'curb'

url = ARGV.fetch(0)
concurrency = Integer(ARGV.fetch(1, '50'))
seconds = Float(ARGV.fetch(2, '5'))

ERRORLIKE = /(unexpected error|something went wrong|Api::Error)/i
multi = Curl::Multi.new
buffer = []
completed = 0
failed = 0
in_flight = 0
started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
deadline = started + seconds

add = lambda do
  easy = Curl::Easy.new(url)
  t0 = Time.now
  easy.follow_location = true
  easy.enable_cookies = true
  easy.on_success do |c|
    in_flight -= 1
    body = c.body_str
    if body.nil? || body.empty? || body =~ ERRORLIKE
      failed += 1
      buffer << [url, nil]
    else
      completed += 1
      buffer << [url, Time.now - t0]
    end
  end
  easy.on_failure do |_c, _err|
    in_flight -= 1
    failed += 1
    buffer << [url, nil]
  end
  multi.add(easy)
  in_flight += 1
end

flush = lambda do
  while (rec = buffer.pop)
    $stdout.puts rec.join("\t")
  end
end

concurrency.times { add.call }
multi.perform do
  flush.call
  if Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    (concurrency - in_flight).times { add.call }
  else
    # Stop at the deadline like the other tools: abandon what is still in flight.
    multi.requests.each { |r| multi.remove(r) } if multi.respond_to?(:requests)
    break
  end
end
flush.call
$stdout.flush
elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
warn format('completed=%d failed=%d seconds=%.3f', completed, failed, elapsed)
