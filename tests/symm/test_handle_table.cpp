#include <gtest/gtest.h>

#include "support/error_text.hpp"
#include "symmoe/symm/handle_table.hpp"

namespace symmoe::symm {
namespace {

TEST(HandleTable, FdTableChecks) {
  ShareableHandleTable t = make_fd_table({5, 6, 7, 8});
  EXPECT_NO_THROW(check_handle_table(t, 4));
  EXPECT_EQ(fd_at(t, 2), 7);
  EXPECT_NE(test::error_text([&] { check_handle_table(t, 8); })
                .find("handle table: 4 handles != world_size=8 (one fd handle per rank)"),
            std::string::npos);
  ShareableHandleTable wrong = t;
  wrong.element = HandleElement::kUInt8;
  EXPECT_NE(test::error_text([&] { check_handle_table(wrong, 4); })
                .find("fd handles must be int32 or int64, got uint8"), std::string::npos);
  ShareableHandleTable size = t;
  size.element = HandleElement::kInt64;
  EXPECT_NE(test::error_text([&] { check_handle_table(size, 4); })
                .find("int64 fd handles are 8 bytes each, got 4"), std::string::npos);
  ShareableHandleTable negative = make_fd_table({3, -1});
  EXPECT_NE(test::error_text([&] { check_handle_table(negative, 2); })
                .find("rank 1's descriptor -1 is not a valid file descriptor"), std::string::npos);
  ShareableHandleTable truncated = t;
  truncated.data.pop_back();
  EXPECT_NE(test::error_text([&] { check_handle_table(truncated, 4); }).find("15 bytes of data for 4 handles"),
            std::string::npos);
}

TEST(HandleTable, FabricTableChecks) {
  ShareableHandleTable t = make_fabric_table(std::vector<uint8_t>(3 * 64, 1), 3);
  EXPECT_NO_THROW(check_handle_table(t, 3));
  EXPECT_EQ(fabric_at(t, 2), t.data.data() + 128);
  ShareableHandleTable wide = make_fabric_table(std::vector<uint8_t>(3 * 32, 1), 3);
  wide.element_bytes = 32;
  EXPECT_NE(test::error_text([&] { check_handle_table(wide, 3); })
                .find("a fabric handle is 64 bytes (CUmemFabricHandle), got 32 (shape must be "
                      "[world_size, 64])"),
            std::string::npos);
  ShareableHandleTable typed = t;
  typed.element = HandleElement::kInt64;
  EXPECT_NE(test::error_text([&] { check_handle_table(typed, 3); })
                .find("fabric handles must be uint8, got int64"), std::string::npos);
  EXPECT_THROW(check_handle_table(t, 4), Error);
  EXPECT_THROW(fd_at(t, 0), Error);
  ShareableHandleTable autos = t;
  autos.type = HandleType::kAuto;
  EXPECT_THROW(check_handle_table(autos, 3), Error);
}

}  // namespace
}  // namespace symmoe::symm
