// Protocol fuzzer: a seeded random mutator over recorded client message
// streams (startup, every authentication method, simple and extended query,
// COPY, cancel, SSL negotiation), each mutant driving a whole ProtocolSession in
// process over a ScriptedStream for a bounded time. It checks that the
// session always ends, never throws, and only ever writes well-framed
// backend messages with a FATAL error, if any, last. Run under ASan/UBSan by
// scripts/test_sanitizers.sh; registered with ctest for a short run.
//   protocol_fuzz [--seconds N] [--seed S]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "protocol/backend_messages.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/message_buffer.hpp"
#include "protocol/scram.hpp"
#include "protocol/protocol_session.hpp"
#include "tests/protocol/client_script.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/scripted_stream.hpp"

namespace tally::protocol {
namespace {

namespace fe = frontend;

std::string startup(const std::string& user) {
  return testing::startup_packet(user, "tally", "fuzz", {{"client_encoding", "UTF8"}});
}

constexpr auto cat = testing::encode_messages;

// Client traffic as real clients produce it (the shapes libpq, pgjdbc and
// psqlODBC send), built with the codec so that every seed is well formed.
std::vector<std::string> seeds() {
  std::vector<std::string> s;
  s.push_back(startup("tally") + cat({fe::Query{"rows 3; notice"}, fe::Query{""},
                                      fe::Query{"begin"}, fe::Query{"fail"},
                                      fe::Query{"commit"}, fe::Terminate{}}));
  s.push_back(startup("tally") +
              cat({fe::Parse{"", "echo $1", {23}}, fe::Bind{"", "", {1}, {std::string("\0\0\0\1", 4)}, {1}},
                   fe::Describe{'P', ""}, fe::Execute{"", 0}, fe::Sync{}, fe::Terminate{}}));
  s.push_back(startup("tally") +
              cat({fe::Parse{"S_1", "rows 5", {}}, fe::Describe{'S', "S_1"},
                   fe::Bind{"C_1", "S_1", {}, {}, {0}}, fe::Execute{"C_1", 2},
                   fe::Execute{"C_1", 2}, fe::Flush{}, fe::Execute{"C_1", 0}, fe::Close{'P', "C_1"},
                   fe::Close{'S', "S_1"}, fe::Sync{}, fe::Parse{"", "fail parse", {}},
                   fe::Bind{"", "", {}, {}, {}}, fe::Sync{}, fe::Terminate{}}));
  s.push_back(startup("tally") + cat({fe::Query{"copy in"}, fe::CopyData{"1\t2\n"},
                                      fe::CopyData{"3\t4\n"}, fe::CopyDone{},
                                      fe::Query{"copy in"}, fe::CopyFail{"no"},
                                      fe::Query{"copy out"}, fe::Terminate{}}));
  s.push_back(fe::encode_startup_packet(fe::SslRequest{}) +
              fe::encode_startup_packet(fe::GssEncRequest{}) + startup("tally") +
              cat({fe::Query{"setting"}, fe::Terminate{}}));
  s.push_back(fe::encode_startup_packet(fe::CancelRequest{4242, 77}));
  s.push_back(startup("alice") + fe::encode(fe::PasswordMessage{std::string("pencil\0", 7)}) +
              cat({fe::Query{"rows 1"}, fe::Terminate{}}));
  // The SCRAM first message; the rest of the exchange depends on the server nonce.
  s.push_back(startup("bob") +
              fe::encode(fe::PasswordMessage{fe::encode_sasl_initial_response(
                  {"SCRAM-SHA-256", "n,,n=,r=fyko+d2lbbFgONRv9qkxdawL"})}) +
              fe::encode(fe::PasswordMessage{"c=biws,r=fyko+d2lbbFgONRv9qkxdawL,p=AAAA"}));
  return s;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string input, const std::vector<std::string>& corpus) {
    int rounds = 1 + static_cast<int>(below(4));
    for (int i = 0; i < rounds; ++i) {
      switch (below(8)) {
        case 0:  // flip a bit
          if (!input.empty()) input[below(input.size())] ^= static_cast<char>(1 << below(8));
          break;
        case 1:  // set a byte to an interesting value
          if (!input.empty()) {
            static constexpr char interesting[] = {0, 1, 4, 0x7f, char(0x80), char(0xff), 'S', 'Q'};
            input[below(input.size())] = interesting[below(sizeof interesting)];
          }
          break;
        case 2: {  // overwrite four bytes with an interesting length word
          if (input.size() >= 4) {
            static constexpr int32_t lengths[] = {0, 3, 4, 5, 8, 9, 10000, 10001, 0x7fffffff, -1};
            std::string word;
            MessageWriter::put_int32(word, lengths[below(std::size(lengths))]);
            input.replace(below(input.size() - 3), 4, word);
          }
          break;
        }
        case 3:  // insert random bytes
          input.insert(below(input.size() + 1), random_bytes(1 + below(16)));
          break;
        case 4:  // delete a range
          if (!input.empty()) {
            size_t at = below(input.size());
            input.erase(at, 1 + below(std::min<size_t>(32, input.size() - at)));
          }
          break;
        case 5:  // duplicate a range (repeated messages)
          if (!input.empty()) {
            size_t at = below(input.size());
            size_t n = 1 + below(std::min<size_t>(64, input.size() - at));
            input.insert(below(input.size() + 1), input.substr(at, n));
          }
          break;
        case 6: {  // splice with another recorded stream
          const std::string& other = corpus[below(corpus.size())];
          size_t cut = below(input.size() + 1);
          size_t from = below(other.size() + 1);
          input = input.substr(0, cut) + other.substr(from);
          break;
        }
        case 7:  // truncate
          input.resize(below(input.size() + 1));
          break;
      }
    }
    return input;
  }

  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

 private:
  std::string random_bytes(size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(below(256));
    return s;
  }
  std::mt19937_64 rng_;
};

// The output must be SSL/GSS answer bytes followed by well-framed backend
// messages, and a FATAL error can only be the last message.
bool output_is_sane(const std::string& output, std::string& why) {
  for (size_t skip = 0; skip <= 2 && skip <= output.size(); ++skip) {
    if (skip > 0 && output[skip - 1] != 'N' && output[skip - 1] != 'S') break;
    try {
      auto messages = backend::decode_all(std::string_view(output).substr(skip));
      for (size_t i = 0; i + 1 < messages.size(); ++i) {
        auto* e = std::get_if<backend::ErrorResponse>(&messages[i]);
        if (e && e->field('V') == "FATAL") {
          why = "a message follows a FATAL error";
          return false;
        }
      }
      return true;
    } catch (const Error&) {
    }
  }
  why = "the output is not well-framed backend messages";
  return false;
}

int run(int seconds, uint64_t seed) {
  config::Config config;
  config.max_message_bytes = 1 << 20;
  config::UserConfig alice{"alice", config::AuthMethod::password, make_scram_verifier("pencil", 64), ""};
  config::UserConfig bob{"bob", config::AuthMethod::scram_sha_256, make_scram_verifier("pencil", 64), ""};
  config.users.push_back(alice);
  config.users.push_back(bob);

  std::vector<std::string> corpus = seeds();
  Mutator mutator(seed);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  uint64_t runs = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string& base = corpus[mutator.below(corpus.size())];
    std::string input = runs < corpus.size() ? corpus[runs] : mutator.mutate(base, corpus);
    testing::FakeFactory factory;
    factory.allow_wait = false;
    testing::FakeHost host;
    testing::ScriptedStream stream(input, 1 + mutator.below(64));
    stream.set_loopback(mutator.below(4) != 0);
    stream.set_tls_available(mutator.below(2) == 0);
    {
      ProtocolSession session(config, factory, host, stream);
      session.run();  // never throws: a throw here ends the fuzzer with a crash
      if (session.state() != ProtocolSession::State::closed) {
        std::fprintf(stderr, "run %llu: session did not close\n", (unsigned long long)runs);
        return 1;
      }
    }
    std::string why;
    if (!output_is_sane(stream.output, why)) {
      std::fprintf(stderr, "run %llu (seed %llu): %s\n", (unsigned long long)runs,
                   (unsigned long long)seed, why.c_str());
      return 1;
    }
    if (host.registered != host.unregistered) {
      std::fprintf(stderr, "run %llu: a backend key stayed registered\n", (unsigned long long)runs);
      return 1;
    }
    ++runs;
  }
  std::printf("protocol_fuzz: %llu sessions in %d s (seed %llu), no failure\n",
              (unsigned long long)runs, seconds, (unsigned long long)seed);
  return runs > corpus.size() ? 0 : 1;
}

}  // namespace
}  // namespace tally::protocol

int main(int argc, char** argv) {
  int seconds = 10;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--seed") == 0) seed = std::strtoull(argv[i + 1], nullptr, 10);
  }
  return tally::protocol::run(seconds, seed);
}
