#include "core/train/process_group.hpp"

#include <cstdint>
#include <stdexcept>

namespace cas::train {
namespace {

enum MessageKind : std::int64_t { kIterate = 1, kStop = 2, kRestore = 3, kSet = 4 };

// A parameter change as text: the name, a newline, the value as parseValue reads it.
std::string changeText(const std::string& name, const params::ParamValue& value) { return name + "\n" + params::formatValue(value); }

void applyChange(AlphaZeroTrainer& trainer, const std::string& text) {
  const size_t newline = text.find('\n');
  const std::string name = text.substr(0, newline);
  const params::ParameterSpec* spec = params::ParameterRegistry::standard().find(name);
  std::string problem;
  std::optional<params::ParamValue> value;
  if (spec && newline != std::string::npos) value = params::parseValue(*spec, std::string_view(text).substr(newline + 1), &problem);
  if (!value) throw std::logic_error("rank " + std::to_string(trainer.rank()) + " cannot read the change of '" + name + "' rank 0 sent: " + problem);
  if (auto refused = trainer.setParameter(name, *value))
    throw std::logic_error("rank " + std::to_string(trainer.rank()) + " refused a change rank 0 took: " + *refused);
}

}  // namespace

LeadingRank::LeadingRank(std::unique_ptr<AlphaZeroTrainer> trainer, dist::Communicator& communicator)
    : trainer_(std::move(trainer)), communicator_(communicator) {
  if (communicator_.rank() != 0) throw std::logic_error("a LeadingRank is rank 0 of its group; the others follow it (followLeadingRank)");
}

void LeadingRank::send(Message message) {
  std::int64_t header[2] = {message.kind, std::int64_t(message.payload.size())};
  communicator_.broadcast(header, sizeof header, 0);
  if (!message.payload.empty()) communicator_.broadcast(message.payload.data(), message.payload.size(), 0);  // read here, the root
}

std::optional<std::string> LeadingRank::setParameter(const std::string& name, const params::ParamValue& value) {
  if (auto problem = trainer_->setParameter(name, value)) return problem;
  queued_.push_back({kSet, changeText(name, value)});
  return std::nullopt;
}

bool LeadingRank::restore(const std::string& bytes, std::string* error) {
  if (!trainer_->restore(bytes, error)) return false;
  // An earlier restore's bytes are superseded: only the newest goes out.
  std::erase_if(queued_, [](const Message& m) { return m.kind == kRestore; });
  queued_.push_back({kRestore, bytes});
  return true;
}

IterationReport LeadingRank::runIteration(const std::function<bool()>& cancelled) {
  if (failed_) throw std::runtime_error("data-parallel training stopped earlier; the ranks cannot run another iteration");
  try {
    for (Message& m : queued_) send(std::move(m));
    queued_.clear();
    send({kIterate, {}});
    return trainer_->runIteration(cancelled);
  } catch (const std::exception& e) {
    failed_ = true;
    communicator_.fail(e.what());  // the others stop at their next collective
    throw;
  }
}

void LeadingRank::stopRanks() {
  if (failed_) return;
  failed_ = true;  // no iteration after this
  send({kStop, {}});
}

void followLeadingRank(AlphaZeroTrainer& trainer, dist::Communicator& communicator, const std::function<bool()>& cancelled) {
  if (communicator.rank() == 0) throw std::logic_error("rank 0 leads the group (LeadingRank); followLeadingRank is for the others");
  try {
    for (;;) {
      std::int64_t header[2] = {0, 0};
      communicator.broadcast(header, sizeof header, 0);
      std::string payload(size_t(header[1]), '\0');
      if (!payload.empty()) communicator.broadcast(payload.data(), payload.size(), 0);
      switch (header[0]) {
        case kStop:
          return;
        case kIterate:
          trainer.runIteration(cancelled);
          break;
        case kRestore: {
          std::string error;
          if (!trainer.restore(payload, &error))
            throw std::runtime_error("rank " + std::to_string(communicator.rank()) + " cannot restore the checkpoint rank 0 restored: " + error);
          break;
        }
        case kSet:
          applyChange(trainer, payload);
          break;
        default:
          throw std::logic_error("rank " + std::to_string(communicator.rank()) + " got message " + std::to_string(header[0]) +
                                 " from rank 0, which it does not know; every rank must run the same build of cuda-agent");
      }
    }
  } catch (const std::exception& e) {
    communicator.fail(e.what());
    throw;
  }
}

std::string toHex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  return hex;
}

std::optional<std::string> fromHex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = value(hex[i]), low = value(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes += char(high * 16 + low);
  }
  return bytes;
}

}  // namespace cas::train
