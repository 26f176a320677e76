// Readable names: C++, Rust legacy and Rust v0 symbols demangled (expected
// forms checked against binutils' c++filt 2.40, crate hashes left out),
// frames and sync object symbols split into their parts, and names that
// are not understood shown as they came.
#include <QtTest>

#include "demangle.h"
#include "symbolname.h"

using tmon::demangle;

class TestDemangle : public QObject {
  Q_OBJECT

 private slots:
  void cxx() {
    QCOMPARE(demangle("_ZZNSt8__detail18__waiter_pool_base6_S_forEPKvE3__w"),
             QStringLiteral("std::__detail::__waiter_pool_base::_S_for(void const*)::__w"));
    QCOMPARE(demangle("_ZN3app5queueE"), QStringLiteral("app::queue"));
  }

  void rustLegacy() {
    QCOMPARE(demangle("_ZN3std3sys4unix5mutex5Mutex4lock17h0123456789abcdefE"),
             QStringLiteral("std::sys::unix::mutex::Mutex::lock"));
    QCOMPARE(demangle("_ZN38_$LT$T$u20$as$u20$core..fmt..Debug$GT$3fmt17h0123456789abcdefE.llvm.7"),
             QStringLiteral("<T as core::fmt::Debug>::fmt"));
    // An escape it does not know: that part as it is.
    QCOMPARE(demangle("_ZN3foo5$XX$a17h0123456789abcdefE"), QStringLiteral("foo::$XX$a"));
    // Itanium, but no Rust hash: the C++ runtime's reading.
    QCOMPARE(demangle("_ZN3std5mutex4lockE"), QStringLiteral("std::mutex::lock"));
  }

  void rustV0_data() {
    QTest::addColumn<QString>("mangled");
    QTest::addColumn<QString>("readable");
    QTest::newRow("inherent impl, generic arg")
        << "_RINvMNtCsgEmfK2I1SDS_4core3stre18trim_start_matchesReECsgY6Mt91CT9J_14rustc_demangle"
        << "<str>::trim_start_matches::<&str>";
    QTest::newRow("trait impl, array type")
        << "_RNvXs_Csfq2Zq5gqAK1_2v0INtB4_7WrapperAhj3_ENtB4_5Named4name"
        << "<v0::Wrapper<[u8; 3]> as v0::Named>::name";
    QTest::newRow("closures, backrefs")
        << "_RINvNtNtCsjrHSEGnQ3l9_3std6thread9lifecycle15spawn_uncheckedNCNCNvCsfq2Zq5gqAK1_2v04main00uECsfq2Zq5gqAK1_2v0"
        << "std::thread::lifecycle::spawn_unchecked::<v0::main::{closure#0}::{closure#0}, ()>";
    QTest::newRow("dyn with binder and associated type")
        << "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDG0_INtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3l9_3std5panic13PanicHookInfoL0_EEEp6OutputuNtNtB4_6marker4SyncNtB2N_4SendEL_EEB1T_"
        << "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> core::ops::function::Fn<(&'a "
           "std::panic::PanicHookInfo<'b>,), Output = ()> + core::marker::Sync + core::marker::Send>>";
    QTest::newRow("punycode") << "_RNvNtCsfq2Zq5gqAK1_2v0u11ncode_cta3gu9gre_6ka8l"
                              << "v0::ünïcode::grüße";
    QTest::newRow("fn pointers") << "_RINvC3app3ptrFlxEbE" << "app::ptr::<fn(i32, i64) -> bool>";
    QTest::newRow("unsafe extern fn") << "_RINvC3app3ptrFUKCEuE"
                                      << "app::ptr::<unsafe extern \"C\" fn()>";
    QTest::newRow("binder in fn") << "_RINvC3app3ptrFG_RL0_hEuE" << "app::ptr::<for<'a> fn(&'a u8)>";
    QTest::newRow("consts") << "_RINvC3app5constKanff_Kb1_Kc61_Kja_E"
                            << "app::const::<-255, true, 'a', 10>";
    QTest::newRow("vendor suffix") << "_RNvNtC3app5inner2fn.llvm.123" << "app::inner::fn";
  }
  void rustV0() {
    QFETCH(QString, mangled);
    QFETCH(QString, readable);
    QCOMPARE(demangle(mangled), readable);
  }

  // Hostile or unknown input comes back as it was, quickly.
  void notUnderstoodStaysRaw_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("plain C") << "lock_a";
    QTest::newRow("cut short") << "_RNvC3app";
    QTest::newRow("trailing junk") << "_RNvC3app3fooX";
    QTest::newRow("backref to itself") << "_RNvC3appB1_";
    QTest::newRow("backref forward") << "_RNvB9_3foo3bar";
    QTest::newRow("encoding version") << "_R1NvC3app3foo";
    QTest::newRow("length past the end") << "_RNvC3app99foo";
    QTest::newRow("bad punycode") << "_RNvC3appu3a_A";
    QTest::newRow("deep nesting") << "_R" + QString("INv").repeated(300) + "C1a3foo" +
                                         QString("E").repeated(300);
    QTest::newRow("long") << "_Z" + QString("N1a").repeated(500) + "E";
  }
  void notUnderstoodStaysRaw() {
    QFETCH(QString, name);
    QCOMPARE(demangle(name), name);
  }

  // Backrefs to backrefs: the output would double at each; bounded.
  void backrefChainsAreBounded() {
    QString s = "_RINvC1a1fTlE";  // a::f<(i32,)>
    for (int k = 0; k < 40; k++) s += QStringLiteral("TB%1_B%1_E").arg(10);
    s += 'E';
    QElapsedTimer t;
    t.start();
    const QString out = demangle(s);
    QVERIFY(out.size() <= 4096 || out == s);
    QVERIFY(t.elapsed() < 1000);
  }

  void frames() {
    QCOMPARE(tmon::readableFrame("app!_ZN3app4workEv+0x1c (app.cpp:12)"),
             QStringLiteral("app!app::work()+0x1c (app.cpp:12)"));
    QCOMPARE(tmon::readableFrame("libc.so.6+0x1234"), QStringLiteral("libc.so.6+0x1234"));
    QCOMPARE(tmon::readableFrame("0x7f0012"), QStringLiteral("0x7f0012"));
    QCOMPARE(tmon::readableFrame("[not unwound]"), QStringLiteral("[not unwound]"));
    // Demangled names may hold '!', '+' and " (": parts are found from the right.
    tmon::FrameParts p = tmon::splitFrame("app!f(void (*)(int))+0x10 (f.cc:3)");
    QCOMPARE(p.module, QStringLiteral("app"));
    QCOMPARE(p.function, QStringLiteral("f(void (*)(int))"));
    QCOMPARE(p.offset, QStringLiteral("0x10"));
    QCOMPARE(p.location, QStringLiteral("f.cc:3"));
    p = tmon::splitFrame("app!A::operator!=(A const&) const");
    QCOMPARE(p.function, QStringLiteral("A::operator!=(A const&) const"));
    QVERIFY(p.offset.isEmpty() && p.location.isEmpty());
    QCOMPARE(p.text(), QStringLiteral("app!A::operator!=(A const&) const"));
  }

  // A std::thread's state is named by the callable it runs; a function
  // pointer's type names nothing, so that state keeps its whole name.
  void threadStates() {
    QCOMPARE(tmon::readableFrame("app!_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUlvE_EEEEE6_M_runEv+0x0"),
             QStringLiteral("app!main::{lambda()#1}+0x0"));
    QCOMPARE(tmon::readableFrame("app!_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUliE_iEEEEE6_M_runEv+0x0"),
             QStringLiteral("app!main::{lambda(int)#1}+0x0"));
    const QString fnPtr = tmon::readableFrame(
        "app!_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJPFviEiEEEEE6_M_runEv+0x0");
    QCOMPARE(fnPtr, QStringLiteral("app!std::thread::_State_impl<std::thread::_Invoker<std::tuple<void "
                                   "(*)(int), int> > >::_M_run()+0x0"));
  }

  void symbols() {
    tmon::SymbolParts s = tmon::splitSymbol("lock+0x0 (random.c)");
    QCOMPARE(s.name, QStringLiteral("lock"));
    QCOMPARE(s.raw, QStringLiteral("lock"));
    QCOMPARE(s.offset, uint64_t(0));
    QCOMPARE(s.file, QStringLiteral("random.c"));
    s = tmon::splitSymbol("_ZN3app5queueE+0x18");
    QCOMPARE(s.name, QStringLiteral("app::queue"));
    QCOMPARE(s.raw, QStringLiteral("_ZN3app5queueE"));
    QCOMPARE(s.offset, uint64_t(0x18));
    QVERIFY(s.file.isEmpty());
    s = tmon::splitSymbol("name+0xzz");  // not an offset: part of the name
    QCOMPARE(s.name, QStringLiteral("name+0xzz"));
  }
};

QTEST_GUILESS_MAIN(TestDemangle)
#include "test_demangle.moc"
