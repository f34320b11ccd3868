// cf_names_cpp.cpp: a C++ program written for macOS against CoreFoundation,
// built here with CRunLoopCFNames.h: a RAII reference that CFRetains what it
// holds (modes included, CFSTR constants among them) and CFReleases it,
// mode names in namespace-scope constants, a timer class that keeps its
// mode. `make test-c` builds and runs it with g++ (and clang++ -fblocks where
// there is clang and a blocks runtime).

#include <CRunLoopCFNames.h>

#include <cstdio>
#include <cstring>
#include <utility>

static int failures = 0;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                              \
            failures++;                                                                                                \
        }                                                                                                              \
    } while (0)

// Mode names as macOS programs keep them.
static CFStringRef kMyMode = CFSTR("MyMode");
static const CFRunLoopMode kModes[] = {kCFRunLoopDefaultMode, CFSTR("Other")};

// A counted reference to a CF object.
template <typename T> class CFRef {
  public:
    CFRef() : ref_(nullptr) {}
    explicit CFRef(T ref) : ref_(ref) {
        if (ref_) CFRetain(ref_);
    }
    static CFRef adopt(T ref) {
        CFRef r;
        r.ref_ = ref;
        return r;
    }
    CFRef(const CFRef &other) : ref_(other.ref_) {
        if (ref_) CFRetain(ref_);
    }
    CFRef(CFRef &&other) noexcept : ref_(other.ref_) {
        other.ref_ = nullptr;
    }
    CFRef &operator=(CFRef other) {
        std::swap(ref_, other.ref_);
        return *this;
    }
    ~CFRef() {
        if (ref_) CFRelease(ref_);
    }
    T get() const {
        return ref_;
    }

  private:
    T ref_;
};

// A repeating timer that keeps the mode it runs in and counts its firings in it.
class ModeTimer {
  public:
    ModeTimer(CFStringRef mode, int stop_after) : mode_(mode), count_(0), stop_after_(stop_after) {
        CFRunLoopTimerContext context = {0, this, nullptr, nullptr, nullptr};
        timer_ = CFRef<CFRunLoopTimerRef>::adopt(CFRunLoopTimerCreate(kCFAllocatorDefault, CFAbsoluteTimeGetCurrent(),
                                                                      0.001, 0, 0, &ModeTimer::fire, &context));
        CFRunLoopAddTimer(CFRunLoopGetCurrent(), timer_.get(), mode_.get());
    }
    ~ModeTimer() {
        CFRunLoopTimerInvalidate(timer_.get());
    }
    ModeTimer(const ModeTimer &) = delete;
    ModeTimer &operator=(const ModeTimer &) = delete;
    int count() const {
        return count_;
    }

  private:
    static void fire(CFRunLoopTimerRef, void *info) {
        ModeTimer *self = static_cast<ModeTimer *>(info);
        CFRef<CFStringRef> current = CFRef<CFStringRef>::adopt(CFRunLoopCopyCurrentMode(CFRunLoopGetCurrent()));
        if (CFEqual(current.get(), self->mode_.get()) && ++self->count_ == self->stop_after_)
            CFRunLoopStop(CFRunLoopGetCurrent());
    }
    CFRef<CFStringRef> mode_;
    CFRef<CFRunLoopTimerRef> timer_;
    int count_, stop_after_;
};

static const char *text(CFStringRef s) {
    return CFStringGetCStringPtr(s, kCFStringEncodingUTF8);
}

static void constant_modes_in_references() {
    CFIndex before = CFGetRetainCount(kMyMode);
    {
        CFRef<CFStringRef> a(kMyMode);
        CFRef<CFStringRef> b = a;
        CFRef<CFStringRef> c(kCFRunLoopDefaultMode);
        CFRef<CFStringRef> d(kModes[1]);
        CHECK(CFEqual(b.get(), CFSTR("MyMode")));
    }
    CFRelease(kMyMode); // immortal: one release too many changes nothing
    CHECK(CFGetRetainCount(kMyMode) == before);
    CHECK(std::strcmp(text(kMyMode), "MyMode") == 0);
}

static void made_strings_in_references() {
    CFRef<CFStringRef> made =
        CFRef<CFStringRef>::adopt(CFStringCreateWithCString(nullptr, "Made", kCFStringEncodingUTF8));
    CHECK(CFGetRetainCount(made.get()) == 1);
    {
        CFRef<CFStringRef> more(made.get());
        CHECK(CFGetRetainCount(made.get()) == 2);
    }
    CHECK(CFGetRetainCount(made.get()) == 1);
    CFRef<CFStringRef> described = CFRef<CFStringRef>::adopt(
        CFStringCreateWithFormat(nullptr, nullptr, CFSTR("%@ in %@ (%d)"), made.get(), kMyMode, 3));
    CHECK(std::strcmp(text(described.get()), "Made in MyMode (3)") == 0);
}

static void timers_keep_their_modes() {
    {
        ModeTimer timer(kMyMode, 3);
        CHECK(CFRunLoopRunInMode(kMyMode, 30.0, false) == kCFRunLoopRunStopped);
        CHECK(timer.count() == 3);
    }
    CFRef<CFStringRef> made =
        CFRef<CFStringRef>::adopt(CFStringCreateWithFormat(nullptr, nullptr, CFSTR("%@-%d"), kMyMode, 2));
    ModeTimer timer(made.get(), 2);
    made = CFRef<CFStringRef>(); // the timer keeps its own reference
    CHECK(CFRunLoopRunInMode(CFSTR("MyMode-2"), 30.0, false) == kCFRunLoopRunStopped);
    CHECK(timer.count() == 2);
    CFRef<CFArrayRef> modes = CFRef<CFArrayRef>::adopt(CFRunLoopCopyAllModes(CFRunLoopGetCurrent()));
    CHECK(CFArrayContainsValue(modes.get(), CFRangeMake(0, CFArrayGetCount(modes.get())), CFSTR("MyMode-2")));
    CHECK(CFRunLoopRunInMode("Nothing", 0, false) == kCFRunLoopRunFinished); // a C string still names a mode
}

static void contexts_take_cf_functions() {
    CFRunLoopSourceContext source_context = {0,       nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, nullptr, nullptr, [](void *) {}};
    CFRef<CFRunLoopSourceRef> source =
        CFRef<CFRunLoopSourceRef>::adopt(CFRunLoopSourceCreate(kCFAllocatorDefault, 0, &source_context));
    CFRunLoopTimerContext context = {0, const_cast<void *>(static_cast<const void *>(source.get())), CFRetain,
                                     CFRelease, CFCopyDescription};
    CFRef<CFRunLoopTimerRef> timer = CFRef<CFRunLoopTimerRef>::adopt(CFRunLoopTimerCreate(
        nullptr, CFAbsoluteTimeGetCurrent() + 1000, 0, 0, 0, [](CFRunLoopTimerRef, void *) {}, &context));
    CHECK(CFGetRetainCount(source.get()) == 2);
    CFRef<CFStringRef> description = CFRef<CFStringRef>::adopt(CFCopyDescription(timer.get()));
    CHECK(std::strstr(text(description.get()), "RLRunLoopSource") != nullptr);
    CHECK(CFGetTypeID(timer.get()) == CFRunLoopTimerGetTypeID());
    CFRunLoopTimerInvalidate(timer.get());
    CHECK(CFGetRetainCount(source.get()) == 1);
}

#if __BLOCKS__
static void blocks_in_several_modes() {
    __block int ran = 0;
    const void *modes[] = {kMyMode, kCFRunLoopDefaultMode};
    CFRef<CFArrayRef> array = CFRef<CFArrayRef>::adopt(CFArrayCreate(nullptr, modes, 2, &kCFTypeArrayCallBacks));
    CFRunLoopPerformBlock(CFRunLoopGetCurrent(), array.get(), ^{ ran++; });
    CFRunLoopPerformBlock(CFRunLoopGetCurrent(), kMyMode, ^{ ran += 10; });
    CHECK(CFRunLoopRunInMode(kMyMode, 0, false) != kCFRunLoopRunFinished);
    CHECK(CFRunLoopRunInMode(kCFRunLoopDefaultMode, 0, false) != kCFRunLoopRunFinished);
    CHECK(ran == 11); // the array's block ran once, in the first of its modes to run
}
#endif

int main() {
    constant_modes_in_references();
    made_strings_in_references();
    timers_keep_their_modes();
    contexts_take_cf_functions();
#if __BLOCKS__
    blocks_in_several_modes();
#endif
    std::printf("cf_names_cpp: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
