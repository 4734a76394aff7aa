#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/error_text.hpp"
#include "symmoe/core/error.hpp"

namespace symmoe {
namespace {

TEST(Error, CheckNamesConditionValuesAndPlace) {
  const int ranks = 73;
  const std::string m = test::error_text([&] {
    SYMMOE_CHECK(ranks <= 72, "group of ", ranks, " ranks exceeds 72");
  });
  EXPECT_NE(m.find("group of 73 ranks exceeds 72"), std::string::npos) << m;
  EXPECT_NE(m.find("check `ranks <= 72` failed at core/test_error.cpp:"), std::string::npos) << m;
}

TEST(Error, CheckWithoutMessage) {
  const std::string m = test::error_text([] { SYMMOE_CHECK(1 + 1 == 3); });
  EXPECT_EQ(m.rfind("[check `1 + 1 == 3` failed at core/test_error.cpp:", 0), 0u) << m;
}

TEST(Error, PassingCheckDoesNotThrow) { EXPECT_NO_THROW(SYMMOE_CHECK(2 > 1, "never")); }

TEST(Error, FailCarriesFileAndLine) {
  int line = 0;
  try {
    line = __LINE__ + 1;
    SYMMOE_FAIL("broken rule ", 42);
  } catch (const Error& e) {
    EXPECT_EQ(e.line(), line);
    EXPECT_NE(std::string(e.file()).find("test_error.cpp"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("broken rule 42 [at core/test_error.cpp:"),
              std::string::npos);
    return;
  }
  FAIL() << "SYMMOE_FAIL did not throw";
}

TEST(Error, CudaRuntimeCheckNamesTheError) {
  const std::string m = test::error_text([] { SYMMOE_CUDA_CHECK(1, "device ", 3); });  // cudaErrorInvalidValue
  EXPECT_NE(m.find("CUDA runtime call `1` failed"), std::string::npos) << m;
  EXPECT_NE(m.find("cudaErrorInvalidValue (1)"), std::string::npos) << m;
  EXPECT_NE(m.find("; device 3"), std::string::npos) << m;
}

TEST(Error, CudaRuntimeCheckPassesOnSuccess) { EXPECT_NO_THROW(SYMMOE_CUDA_CHECK(0)); }

TEST(Error, DriverCheckNamesTheCode) {
  const std::string m = test::error_text([] { SYMMOE_CU_CHECK(2); });  // CUDA_ERROR_OUT_OF_MEMORY
  EXPECT_NE(m.find("CUDA driver call `2` failed"), std::string::npos) << m;
  // With a driver the name is spelled out; without one the code still is.
  EXPECT_TRUE(m.find("CUDA_ERROR_OUT_OF_MEMORY (2)") != std::string::npos ||
              m.find("CUresult 2 (no driver to name it)") != std::string::npos)
      << m;
}

TEST(Error, NcclCheckNamesTheCode) {
  const std::string m = test::error_text([] { SYMMOE_NCCL_CHECK(3, "comm init"); });
  EXPECT_NE(m.find("NCCL call `3` failed"), std::string::npos) << m;
  EXPECT_NE(m.find("ncclResult 3"), std::string::npos) << m;
  EXPECT_NE(m.find("; comm init"), std::string::npos) << m;
}

}  // namespace
}  // namespace symmoe
