// The tests' realm has Symbol.dispose (test/setup-disposable.cjs): `using` runs, and objects
// are disposed of by it, as in a Node program.
test("`using` calls an object's [Symbol.dispose] at the end of its block", () => {
  let closed = 0;
  class R {
    [Symbol.dispose]() {
      closed++;
    }
  }
  {
    using r = new R();
    expect(closed).toBe(0);
    void r;
  }
  expect(typeof Symbol.dispose).toBe('symbol');
  expect(closed).toBe(1);
});
