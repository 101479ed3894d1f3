#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A Python binding of libsecmem, with ctypes and nothing else.

Every call that can fail goes through the library's _r function, which
returns the SECMEM_E* code of its failure: the error is the call's own
return value, never read afterwards from secmem_last_error(), which is
per OS thread.  A Go binding needs the same (a goroutine may move to
another thread between two cgo calls), and so does any binding that keeps
no per-thread state.  ctypes keeps errno per Python thread (use_errno),
so SecmemError carries it too.

Run as a program it checks itself against the libsecmem.so.0 that the
dynamic linker finds (make -C libsecmem example-check runs it against the
installed tree) and exits non-zero if anything is wrong:

    python3 secmem.py [--header INCLUDEDIR/secmem.h]

With --header it also checks that its error codes and the library's
version are those of the installed header.
"""

import ctypes
import errno
import re
import sys
import threading

OK = 0
ENOBACKEND = 0x5EC000
(EMEMLOCK, ENOMEM, EINVAL, EOVERFLOW, EBUSY, ESYSCALL, ENOTSUP,
 EWIPED) = range(ENOBACKEND + 1, ENOBACKEND + 9)
CODES = {
    "SECMEM_OK": OK, "SECMEM_ENOBACKEND": ENOBACKEND,
    "SECMEM_EMEMLOCK": EMEMLOCK, "SECMEM_ENOMEM": ENOMEM,
    "SECMEM_EINVAL": EINVAL, "SECMEM_EOVERFLOW": EOVERFLOW,
    "SECMEM_EBUSY": EBUSY, "SECMEM_ESYSCALL": ESYSCALL,
    "SECMEM_ENOTSUP": ENOTSUP, "SECMEM_EWIPED": EWIPED,
}
SIZE_MAX = ctypes.c_size_t(-1).value

_lib = ctypes.CDLL("libsecmem.so.0", use_errno=True)


def _proto(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


_void_pp = ctypes.POINTER(ctypes.c_void_p)
_version = _proto("secmem_version", ctypes.c_uint)
_malloc_r = _proto("secmem_malloc_r", ctypes.c_int, _void_pp,
                   ctypes.c_size_t)
_aligned_alloc_r = _proto("secmem_aligned_alloc_r", ctypes.c_int, _void_pp,
                          ctypes.c_size_t, ctypes.c_size_t)
_free = _proto("secmem_free", None, ctypes.c_void_p)
_owns = _proto("secmem_owns", ctypes.c_int, ctypes.c_void_p)
_usable_size = _proto("secmem_usable_size", ctypes.c_size_t,
                      ctypes.c_void_p)
_trim = _proto("secmem_trim", ctypes.c_int)
_backend_r = _proto("secmem_backend_r", ctypes.c_int,
                    ctypes.POINTER(ctypes.c_int))
_backend_name = _proto("secmem_backend_name", ctypes.c_char_p, ctypes.c_int)
_strerror_r = _proto("secmem_strerror_r", ctypes.c_size_t, ctypes.c_int,
                     ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
# Only to show what a binding must not rely on.
_last_error = _proto("secmem_last_error", ctypes.c_int)


def encode(major, minor, patch):
    """SECMEM_VERSION_ENCODE()."""
    return major << 16 | minor << 8 | patch


def version():
    """The loaded library's release, as encode() gives it."""
    return _version()


def strerror(code):
    """The sentence for a code, the same on every thread."""
    n = _strerror_r(code, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    _strerror_r(code, buf, len(buf))
    return buf.value.decode()


class SecmemError(OSError):
    """A failed call: .code is its SECMEM_E* code, .errno its errno."""

    def __init__(self, code):
        super().__init__(ctypes.get_errno(), strerror(code))
        self.code = code


def _check(code):
    if code != OK:
        raise SecmemError(code)


def backend():
    """The backend's name; SecmemError if there is none."""
    b = ctypes.c_int()
    _check(_backend_r(ctypes.byref(b)))
    return _backend_name(b.value).decode()


def trim():
    """Give arenas without a live allocation back; True if any were."""
    return _trim() == 1


class Secret:
    """@size bytes of secret memory, zeroed and freed by close()."""

    def __init__(self, size, alignment=None):
        p = ctypes.c_void_p()
        if alignment is None:
            code = _malloc_r(ctypes.byref(p), size)
        else:
            code = _aligned_alloc_r(ctypes.byref(p), alignment, size)
        _check(code)
        self.address = p.value
        self.size = size

    def write(self, data):
        if len(data) > self.size:
            raise ValueError("secret larger than its memory")
        ctypes.memmove(self.address, data, len(data))

    def read(self):
        """A copy in ordinary memory: for a check, not for a real key."""
        return ctypes.string_at(self.address, self.size)

    def close(self):
        if self.address:
            _free(self.address)
            self.address = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- the self-check ----------------------------------------------------------

def _header_values(path):
    """SECMEM_VERSION_NUMBER and enum secmem_error of a secmem.h."""
    text = open(path, encoding="utf-8").read()
    parts = [int(re.search(r"#define SECMEM_VERSION_%s\s+(\d+)" % p,
                           text).group(1))
             for p in ("MAJOR", "MINOR", "PATCH")]
    body = re.search(r"enum secmem_error \{(.*?)\};", text, re.S).group(1)
    codes, value = {}, -1
    for m in re.finditer(r"^\s*(SECMEM_\w+)\s*(?:=\s*(\w+))?,", body, re.M):
        value = int(m.group(2), 0) if m.group(2) else value + 1
        codes[m.group(1)] = value
    return encode(*parts), codes


def main(argv):
    failed = 0

    def check(ok, what):
        nonlocal failed
        print("%s - %s" % ("ok" if ok else "not ok", what))
        failed += not ok

    v = version()
    check(v >= encode(0, 2, 0),
          "libsecmem %d.%d.%d has the _r functions (0.2.0)"
          % (v >> 16, v >> 8 & 255, v & 255))
    if len(argv) == 3 and argv[1] == "--header":
        number, codes = _header_values(argv[2])
        check(v == number, "the library is the header's release")
        check(codes == CODES, "the binding's error codes are the header's")

    name = backend()
    with Secret(32) as key:
        key.write(b"correct horse battery staple")
        check(key.read().startswith(b"correct horse battery staple"),
              "a 32-byte secret in %s memory at 0x%x, written and read back"
              % (name, key.address))
        check(_owns(key.address) == 1 and _usable_size(key.address) >= 32,
              "libsecmem owns it, with 32 usable bytes or more")
    check(trim(), "secmem_trim() gave its memory back once it was freed")

    try:
        Secret(16, alignment=3)
        check(False, "an alignment of 3 fails")
    except SecmemError as e:
        check(e.code == EINVAL and e.errno == errno.EINVAL
              and "powers of two" in e.strerror,
              "an alignment of 3: code 0x%x (SECMEM_EINVAL), errno %s, "
              "\"%s...\"" % (e.code, errno.errorcode[e.errno],
                            e.strerror[:40]))

    try:
        Secret(SIZE_MAX)
        check(False, "SIZE_MAX bytes fail")
    except SecmemError as e:
        check(e.code == EOVERFLOW and e.errno == errno.ENOMEM,
              "SIZE_MAX bytes: code 0x%x (SECMEM_EOVERFLOW), errno %s"
              % (e.code, errno.errorcode[e.errno]))

    # The code travels with the call: what another thread failed with is
    # its own, whatever this thread's last error says.
    caught = []

    def other_thread():
        try:
            Secret(16, alignment=24)
        except SecmemError as e:
            caught.append(e.code)

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    check(caught == [EINVAL] and _last_error() == EOVERFLOW,
          "a failure on another thread returned its code (SECMEM_EINVAL); "
          "this thread's secmem_last_error() still says SECMEM_EOVERFLOW")

    print("secmem.py: %s" % ("all checks passed" if not failed
                             else "%d checks failed" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
