// Imported first by main.tsx, before any module that defines a schema: zod's objects otherwise probe whether
// they may compile code (`new Function`) when they are made, which the page's Content-Security-Policy refuses,
// and the browser writes that refusal to the console on every page load. Parsing without it is as correct and
// fast enough for the forms here.
import { z } from 'zod';

z.config({ jitless: true });
