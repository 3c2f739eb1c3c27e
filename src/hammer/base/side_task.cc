#include "hammer/base/side_task.h"

#include <system_error>
#include <utility>

namespace hammer {

SideTask::SideTask(std::function<void()> work) : work_(std::move(work)) {
  try {
    thread_ = std::thread([this] { work_(); });
  } catch (const std::system_error&) {  // no thread to be had: the work is done here
    work_();
  }
}

}  // namespace hammer
