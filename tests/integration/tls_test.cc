// TLS and mutual TLS on the real tiling_server binary, with certificates that
// `openssl` generates when the suite starts: a CA, a server certificate for
// localhost / 127.0.0.1 / tiling.internal, a client certificate, and a
// second ("rogue") CA with its own client certificate that the server must
// not trust. The clients are npu::client::TilingClient and the tilingctl
// binary. Skipped when openssl is not installed.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/tiling_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace npu::server::testing {
namespace {

namespace pb = ::npu::tiling::v1;
using ::testing::HasSubstr;

// Runs `command` through the shell; returns its exit code and puts stdout
// and stderr in `output`.
int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t got = 0;
  while ((got = fread(buffer, 1, sizeof(buffer), pipe)) > 0) output->append(buffer, got);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string ReadText(const std::string& path) {
  std::string text;
  FILE* file = fopen(path.c_str(), "rb");
  if (file == nullptr) return text;
  char buffer[4096];
  size_t got = 0;
  while ((got = fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, got);
  fclose(file);
  return text;
}

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string ignored;
    if (RunCommand("openssl version", &ignored) != 0) return;
    dir_ = new std::string(MakeTempDir("npu_tls_"));
    const std::string& d = *dir_;
    // P-256 keys: quick to generate, and accepted by gRPC's TLS stack.
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::vector<std::string> commands = {
        absl::StrCat("openssl req -x509 ", key, " -keyout ", d, "/ca.key -out ", d,
                     "/ca.pem -days 2 -subj /CN=npu-test-ca"),
        absl::StrCat("openssl req -x509 ", key, " -keyout ", d, "/rogue-ca.key -out ", d,
                     "/rogue-ca.pem -days 2 -subj /CN=npu-rogue-ca"),
        absl::StrCat("printf 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:tiling.internal\\n' > ",
                     d, "/server.ext"),
        absl::StrCat("openssl req ", key, " -keyout ", d, "/server.key -out ", d,
                     "/server.csr -subj /CN=localhost"),
        absl::StrCat("openssl x509 -req -in ", d, "/server.csr -CA ", d, "/ca.pem -CAkey ", d,
                     "/ca.key -CAcreateserial -days 2 -extfile ", d, "/server.ext -out ", d,
                     "/server.pem"),
        absl::StrCat("openssl req ", key, " -keyout ", d, "/client.key -out ", d,
                     "/client.csr -subj /CN=graph-compiler"),
        absl::StrCat("openssl x509 -req -in ", d, "/client.csr -CA ", d, "/ca.pem -CAkey ", d,
                     "/ca.key -CAcreateserial -days 2 -out ", d, "/client.pem"),
        absl::StrCat("openssl req ", key, " -keyout ", d, "/rogue.key -out ", d,
                     "/rogue.csr -subj /CN=intruder"),
        absl::StrCat("openssl x509 -req -in ", d, "/rogue.csr -CA ", d, "/rogue-ca.pem -CAkey ", d,
                     "/rogue-ca.key -CAcreateserial -days 2 -out ", d, "/rogue.pem"),
    };
    for (const std::string& command : commands) {
      std::string output;
      ASSERT_EQ(RunCommand(command, &output), 0) << command << "\n" << output;
    }
  }

  static void TearDownTestSuite() {
    if (dir_ == nullptr) return;
    std::string ignored;
    RunCommand("rm -rf " + *dir_, &ignored);
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (dir_ == nullptr) GTEST_SKIP() << "openssl is not installed (apt-get install openssl)";
  }

  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }
  static std::string Pem(const std::string& name) { return ReadText(Path(name)); }

  // A tiling_server on TLS; mutual TLS when `client_ca` names a CA file.
  static std::unique_ptr<ServerProcess> StartServer(const std::string& client_ca = "") {
    std::vector<std::string> args = {"--metrics_port=-1", "--drain_seconds=1",
                                     "--tls_cert=" + Path("server.pem"),
                                     "--tls_key=" + Path("server.key")};
    if (!client_ca.empty()) args.push_back("--tls_client_ca=" + Path(client_ca));
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start(NPU_SERVER_BINARY, args);
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? *std::move(server) : nullptr;
  }

  // Options for a client without retries (a refused handshake is reported
  // at once) and with a short deadline.
  static npu::client::ClientOptions Options(const std::string& target) {
    npu::client::ClientOptions options;
    options.target = target;
    options.max_attempts = 1;
    options.timeout = absl::Seconds(30);
    return options;
  }

  // The status of one ListPlatforms call through `options`.
  static absl::Status Call(const npu::client::ClientOptions& options) {
    absl::StatusOr<std::unique_ptr<npu::client::TilingClient>> client =
        npu::client::TilingClient::Connect(options);
    if (!client.ok()) return client.status();
    return (*client)->ListPlatforms().status();
  }

  static std::string* dir_;
};

std::string* TlsTest::dir_ = nullptr;

TEST_F(TlsTest, TlsClientTrustingTheCaWorks) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  // By IP address, checked against the certificate's IP entry. (Not
  // "localhost:PORT": resolving a name goes through c-ares, whose resolver
  // leaks 20 bytes now and then under LeakSanitizer; the DNS entries are
  // checked through tls_server_name below.)
  npu::client::ClientOptions options = Options(server->target());
  options.use_tls = true;
  options.tls_root_ca_pem = Pem("ca.pem");
  EXPECT_TRUE(Call(options).ok()) << Call(options);

  // A real decision and the health service over the same TLS channel.
  absl::StatusOr<std::unique_ptr<npu::client::TilingClient>> client =
      npu::client::TilingClient::Connect(options);
  ASSERT_TRUE(client.ok());
  pb::TilingRequest request;
  pb::MatmulProblem* p = request.mutable_problem();
  p->set_m(4096);
  p->set_n(1280);
  p->set_k(8192);
  p->set_dtype_a(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_b(pb::DATA_TYPE_FLOAT16);
  p->set_dtype_c(pb::DATA_TYPE_FLOAT16);
  p->set_trans_b(true);
  p->set_format_b(pb::FORMAT_FRACTAL_NZ);
  absl::StatusOr<pb::TilingResponse> response = (*client)->GetTiling(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->tiling_key(), 4162u);
  absl::StatusOr<npu::client::ServingStatus> health = (*client)->CheckHealth("");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, npu::client::ServingStatus::kServing);

  // The certificate's DNS name.
  options.tls_server_name = "localhost";
  EXPECT_TRUE(Call(options).ok());
}

TEST_F(TlsTest, PlaintextClientIsRefused) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  const absl::Status status = Call(Options(server->target()));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  // The server shrugs it off.
  npu::client::ClientOptions tls = Options(server->target());
  tls.use_tls = true;
  tls.tls_root_ca_pem = Pem("ca.pem");
  EXPECT_TRUE(Call(tls).ok());
}

TEST_F(TlsTest, ClientThatDoesNotTrustTheServerRefusesIt) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  npu::client::ClientOptions options = Options(server->target());
  options.use_tls = true;
  options.tls_root_ca_pem = Pem("rogue-ca.pem");
  EXPECT_EQ(Call(options).code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, ServerNameOverrideIsCheckedAgainstTheCertificate) {
  std::unique_ptr<ServerProcess> server = StartServer();
  ASSERT_NE(server, nullptr);
  npu::client::ClientOptions options = Options(server->target());
  options.use_tls = true;
  options.tls_root_ca_pem = Pem("ca.pem");
  options.tls_server_name = "tiling.internal";
  EXPECT_TRUE(Call(options).ok());
  options.tls_server_name = "elsewhere.example";
  EXPECT_EQ(Call(options).code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, MutualTlsRefusesClientsWithoutATrustedCertificate) {
  std::unique_ptr<ServerProcess> server = StartServer("ca.pem");
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(server->Log(), HasSubstr("mutual TLS on"));
  npu::client::ClientOptions options = Options(server->target());
  options.use_tls = true;
  options.tls_root_ca_pem = Pem("ca.pem");

  // No client certificate.
  EXPECT_EQ(Call(options).code(), absl::StatusCode::kUnavailable);
  // A certificate from a CA the server does not trust.
  options.tls_cert_chain_pem = Pem("rogue.pem");
  options.tls_private_key_pem = Pem("rogue.key");
  EXPECT_EQ(Call(options).code(), absl::StatusCode::kUnavailable);
  // The server's CA signed this one.
  options.tls_cert_chain_pem = Pem("client.pem");
  options.tls_private_key_pem = Pem("client.key");
  EXPECT_TRUE(Call(options).ok()) << Call(options);
  // Plaintext, of course, neither.
  EXPECT_EQ(Call(Options(server->target())).code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, TilingctlSpeaksTlsAndMutualTls) {
  std::unique_ptr<ServerProcess> server = StartServer("ca.pem");
  ASSERT_NE(server, nullptr);
  const std::string ctl =
      absl::StrCat(NPU_TILINGCTL_BINARY, " platforms --timeout 30s --server ", server->target());
  std::string output;
  EXPECT_EQ(RunCommand(absl::StrCat(ctl, " --tls_ca ", Path("ca.pem"), " --tls_cert ",
                                    Path("client.pem"), " --tls_key ", Path("client.key"),
                                    " --tls_server_name localhost --json"),
                       &output),
            0)
      << output;
  EXPECT_THAT(output, HasSubstr("\"defaultPlatform\":\"ascend950pr\""));

  output.clear();
  EXPECT_EQ(RunCommand(absl::StrCat(ctl, " --tls_ca ", Path("ca.pem")), &output), 1) << output;
  EXPECT_THAT(output, HasSubstr("UNAVAILABLE"));
  output.clear();
  EXPECT_EQ(RunCommand(ctl, &output), 1) << output;
  output.clear();
  EXPECT_EQ(RunCommand(absl::StrCat(ctl, " --tls_ca ", Path("missing.pem")), &output), 2) << output;
  EXPECT_THAT(output, HasSubstr("--tls_ca"));
}

TEST_F(TlsTest, BadTlsFlagsStopTheServerWithExitOne) {
  struct BadFlags {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<BadFlags> cases = {
      {{"--tls_cert=" + Path("server.pem")}, "--tls_key"},
      {{"--tls_key=" + Path("server.key")}, "--tls_cert"},
      {{"--tls_client_ca=" + Path("ca.pem")}, "--tls_client_ca"},
      {{"--tls_cert=" + Path("missing.pem"), "--tls_key=" + Path("server.key")},
       "--tls_cert: cannot read"},
      // The client's key does not belong to the server's certificate.
      {{"--tls_cert=" + Path("server.pem"), "--tls_key=" + Path("client.key")}, "cannot serve on"},
  };
  for (const BadFlags& bad : cases) {
    std::vector<std::string> args = {"--metrics_port=-1"};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start(NPU_SERVER_BINARY, args);
    ASSERT_FALSE(server.ok()) << absl::StrJoin(bad.args, " ");
    EXPECT_THAT(std::string(server.status().message()), HasSubstr("exited with 1"));
    EXPECT_THAT(std::string(server.status().message()), HasSubstr(bad.message));
  }
}

}  // namespace
}  // namespace npu::server::testing
