// CoreFoundation's C names are Foundation's in Swift, even next to CRunLoop:
// CRunLoopCFNames.h (the same names for C programs) and CRunLoopCFTypes.h
// (the CF strings, arrays and data under them) stay out of the CRunLoop
// module, so nothing here is ambiguous. If either ever entered the module,
// this file would stop compiling or find our objects instead of CF's.

import CoreFoundation
import CRunLoop
import Foundation
import XCTest

final class CFNamesInteropTests: XCTestCase {
    func test_cf_names_stay_foundations_next_to_crunloop() {
        let cfLoop: CFRunLoop? = CFRunLoopGetCurrent()
        XCTAssertNotNil(cfLoop)
        let cfMode: CFRunLoopMode? = kCFRunLoopDefaultMode
        XCTAssertNotNil(cfMode)
        let ours: RLRunLoopRef? = RLRunLoopGetCurrent()
        XCTAssertNotNil(ours)
        XCTAssertEqual(String(cString: kRLRunLoopDefaultMode), "kCFRunLoopDefaultMode")
    }

    func test_cf_strings_stay_foundations_next_to_crunloop() {
        let mode = CFStringCreateWithCString(nil, "Tracking", CFStringBuiltInEncodings.UTF8.rawValue)
        XCTAssertNotNil(mode)
        XCTAssertEqual(CFStringGetLength(mode), 8)
        XCTAssertEqual(CFGetTypeID(mode), CFStringGetTypeID())
    }
}
