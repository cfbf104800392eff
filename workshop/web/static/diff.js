// The diff opens at the lesson: the first hunk that changes code, past the
// package clause and the imports (ParseDiff marks it #lesson). A link with
// a fragment of its own goes where it says.
"use strict";
(function () {
  const lesson = document.getElementById("lesson");
  if (lesson && !location.hash) lesson.scrollIntoView({ block: "start" });
})();
