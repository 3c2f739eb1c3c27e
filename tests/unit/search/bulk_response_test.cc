#include "hammer/search/bulk_response.h"

#include <gtest/gtest.h>

namespace hammer::search {
namespace {

TEST(BulkResponseTest, AllSucceeded) {
  BulkResponseParser parser;
  BulkResponse response;
  ASSERT_TRUE(parser
                  .Parse(R"({"took":7,"errors":false,"items":[{"index":{"status":201}},)"
                         R"({"delete":{"status":404}},{"update":{"status":200}}]})",
                         3, &response)
                  .ok());
  EXPECT_EQ(response.took_ms, 7);
  EXPECT_FALSE(response.errors);
  ASSERT_EQ(response.items.size(), 3u);
  EXPECT_TRUE(response.items[0].ok());
  EXPECT_EQ(response.items[1].status, 404);
  EXPECT_EQ(response.items[1].reason, "");  // a delete of a missing document: no error
  EXPECT_TRUE(response.items[2].ok());
}

TEST(BulkResponseTest, ItemErrorsWithTypeReasonAndCause) {
  BulkResponseParser parser;
  BulkResponse response;
  const char* body = R"({"took":3,"errors":true,"items":[
    {"index":{"_index":"t","_id":"1","status":400,"error":{"type":"mapper_parsing_exception",
      "reason":"failed to parse field [n] of type [long]","caused_by":{
      "type":"illegal_argument_exception","reason":"For input string: \"abc\""}}}},
    {"create":{"status":429,"error":{"type":"es_rejected_execution_exception","reason":"full"}}},
    {"index":{"status":500,"error":"plain text error"}},
    {"index":{"status":201}}]})";
  ASSERT_TRUE(parser.Parse(body, 4, &response).ok());
  EXPECT_TRUE(response.errors);
  EXPECT_EQ(response.items[0].status, 400);
  EXPECT_EQ(response.items[0].error_type, "mapper_parsing_exception");
  EXPECT_EQ(response.items[0].reason,
            "mapper_parsing_exception: failed to parse field [n] of type [long] (caused by "
            "illegal_argument_exception: For input string: \"abc\")");
  EXPECT_EQ(response.items[1].error_type, "es_rejected_execution_exception");
  EXPECT_EQ(response.items[1].reason, "es_rejected_execution_exception: full");
  EXPECT_EQ(response.items[2].error_type, "");
  EXPECT_EQ(response.items[2].reason, "plain text error");
  EXPECT_TRUE(response.items[3].ok());
}

// An error given as an empty string or an empty object still names itself (found by
// bulk_response_fuzz: an empty string gave an error item without a reason).
TEST(BulkResponseTest, EmptyErrorsStillHaveAReason) {
  BulkResponseParser parser;
  BulkResponse response;
  ASSERT_TRUE(parser
                  .Parse(R"({"errors":true,"items":[{"create":{"status":429,"error":""}},)"
                         R"({"index":{"status":400,"error":{}}}]})",
                         2, &response)
                  .ok());
  ASSERT_EQ(response.items.size(), 2u);
  EXPECT_EQ(response.items[0].reason, "error without a reason");
  EXPECT_EQ(response.items[1].reason, "error without a reason");
}

TEST(BulkResponseTest, MalformedAnswersAreErrors) {
  BulkResponseParser parser;
  BulkResponse response;
  response.took_ms = 99;
  EXPECT_FALSE(parser.Parse("not json", 1, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"errors":false})", 1, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"items":[{"index":{"status":201}}]})", 2, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"items":[{"index":{}}]})", 1, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"items":[{"index":{"status":99}}]})", 1, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"items":[{"a":{"status":200},"b":{}}]})", 1, &response).ok());
  EXPECT_FALSE(parser.Parse(R"({"items":[5]})", 1, &response).ok());
  EXPECT_EQ(response.took_ms, 99);  // untouched on error
  Status status = parser.Parse(R"({"items":[]})", 3, &response);
  EXPECT_EQ(status.message(), "bulk response has 0 items for 3 actions");
}

TEST(BulkResponseTest, RetryableClassification) {
  EXPECT_TRUE(IsRetryableItemFailure(429, "es_rejected_execution_exception"));
  EXPECT_TRUE(IsRetryableItemFailure(429, ""));
  EXPECT_TRUE(IsRetryableItemFailure(503, "unavailable_shards_exception"));
  EXPECT_TRUE(IsRetryableItemFailure(500, "opensearch_rejected_execution_exception"));
  EXPECT_TRUE(IsRetryableItemFailure(500, "node_closed_exception"));
  EXPECT_FALSE(IsRetryableItemFailure(400, "mapper_parsing_exception"));
  EXPECT_FALSE(IsRetryableItemFailure(404, "index_not_found_exception"));
  EXPECT_FALSE(IsRetryableItemFailure(409, "version_conflict_engine_exception"));
  EXPECT_FALSE(IsRetryableItemFailure(403, "cluster_block_exception"));
  EXPECT_TRUE(IsRetryableItemFailure(503, "cluster_block_exception"));
  EXPECT_TRUE(IsRetryableHttpStatus(429));
  EXPECT_TRUE(IsRetryableHttpStatus(502));
  EXPECT_TRUE(IsRetryableHttpStatus(503));
  EXPECT_FALSE(IsRetryableHttpStatus(400));
  EXPECT_FALSE(IsRetryableHttpStatus(413));
  EXPECT_FALSE(IsRetryableHttpStatus(401));
  EXPECT_TRUE(IsVersionConflict(409, "version_conflict_engine_exception"));
  EXPECT_FALSE(IsVersionConflict(400, "mapper_parsing_exception"));
}

}  // namespace
}  // namespace hammer::search
