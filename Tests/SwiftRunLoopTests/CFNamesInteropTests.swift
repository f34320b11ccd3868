// CoreFoundation's C names are Foundation's in Swift, even next to CRunLoop:
// CRunLoopCFNames.h (the same names for C programs) stays out of the CRunLoop
// module, so nothing here is ambiguous. If it ever entered the module, this
// file would stop compiling.

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
}
