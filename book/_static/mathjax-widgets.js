/* The widget manager (@jupyter-widgets/html-manager 1.x) typesets widget labels with MathJax 2's
   MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the book loads MathJax 3, which has no Hub,
   so on a page with math every widget would throw.  This gives whatever window.MathJax becomes
   (Sphinx's configuration object, then MathJax 3 itself) a Hub.Queue that typesets the element with
   MathJax 3 once it is ready.  Loaded before both, on every page. */
(function () {
  var current = window.MathJax, pending = [];
  function typeset(el) {
    var mj = current;
    if (mj && mj.startup && mj.startup.promise && mj.typesetPromise) {
      mj.startup.promise.then(function () { return mj.typesetPromise([el]); });
    } else {
      pending.push(el);
    }
  }
  function withHub(value) {
    if (value && typeof value === "object" && !value.Hub) {
      value.Hub = { Queue: function (cmd) { if (Array.isArray(cmd) && cmd[2]) typeset(cmd[2]); } };
    }
    return value;
  }
  Object.defineProperty(window, "MathJax", {
    configurable: true,
    get: function () { return current; },
    set: function (value) {
      current = withHub(value);
      if (current && current.typesetPromise && pending.length) pending.splice(0).forEach(typeset);
    }
  });
})();
